import HomeAssistant

/// What the service may evaluate while it has not taken Home Assistant's current states: before the first snapshot
/// the engine has no states at all, and between a reconnection and the service taking its snapshot (which begins the
/// restart grace) Home Assistant may be fresh from a restart.
///
/// - Before the first snapshot the minute's tick and a reload evaluate no activity that reads an entity: with no
///   states its condition is false, and an activity restored from the state file would be ended. (After a
///   reconnection they read the states from before it, `EntityStore.lent`, so they go on then.)
/// - A `render_template` result (a template only Home Assistant renders, perhaps an `active_when`) that comes while the
///   current snapshot is not taken is kept, newest per template, and applied and evaluated once it is: under the grace.
struct FreshStatesGate {
    /// Snapshots the service has taken (the connection counts those it received: `snapshotCount`).
    private(set) var snapshotsTaken = 0
    /// Of those, the ones that were a socket's first (`connectionSnapshotCount`): each begins a restart grace.
    private var connectionSnapshotsTaken = 0
    /// Renderings kept back, in the order their templates first came, newest result of each.
    private var kept: [(source: String, rendering: TemplateRendering)] = []

    /// Whether the states the service reads are Home Assistant's current ones: connected, and the connection's last
    /// snapshot taken. (The daemon always follows a selection, `.nothing` too, so every connection brings one.)
    func isCurrent(phase: ConnectionPhase, snapshotCount: Int) -> Bool {
        phase == .ready && snapshotCount == snapshotsTaken
    }

    /// Whether the engine has states at all: the first snapshot is taken.
    var statesKnown: Bool { snapshotsTaken > 0 }

    /// A rendering came: true when it is to be applied and evaluated now; false when it is kept for `tookSnapshot`.
    mutating func admit(_ rendering: TemplateRendering, of source: String, phase: ConnectionPhase, snapshotCount: Int) -> Bool {
        guard !isCurrent(phase: phase, snapshotCount: snapshotCount) else { return true }
        if let i = kept.firstIndex(where: { $0.source == source }) { kept[i].rendering = rendering } else { kept.append((source, rendering)) }
        return false
    }

    /// The service takes the snapshots so far (`count`, of them `connectionCount` a socket's first): whether a
    /// (re)connection's is among them (a restart grace begins; a reload's re-subscription begins none), and the
    /// renderings kept back, to apply once the grace is in force.
    mutating func tookSnapshot(count: Int, connectionCount: Int) -> (beginsGrace: Bool, kept: [(source: String, rendering: TemplateRendering)]) {
        let beginsGrace = connectionCount != connectionSnapshotsTaken
        snapshotsTaken = count
        connectionSnapshotsTaken = connectionCount
        defer { kept = [] }
        return (beginsGrace, kept)
    }

    /// A new set of templates: renderings of templates no longer followed are forgotten.
    mutating func follow(only sources: Set<String>) {
        kept.removeAll { !sources.contains($0.source) }
    }
}
