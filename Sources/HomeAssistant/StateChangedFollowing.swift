import JSON

/// The fallback: subscribe to `state_changed` first (so nothing falls between), then take `get_states` as the
/// snapshot. Events before the snapshot are dropped: the snapshot already holds their outcome.
final class StateChangedFollowing: EntityFollowing {
    private let selection: EntitySelection
    private var awaitingSnapshot = true

    init(_ selection: EntitySelection) { self.selection = selection }

    var subscription: [String: JSONValue] { ["type": "subscribe_events", "event_type": "state_changed"] }
    var snapshotCommand: [String: JSONValue]? { ["type": "get_states"] }
    var refusal: (warning: String, closeReason: String) { ("subscribe_events state_changed failed", "could not subscribe to state_changed") }

    /// What a failed or unreadable `get_states` means.
    static let noSnapshot = EntityFollowingOutcome.unusable("could not read the states", warning: "get_states failed")

    /// One state_changed event: a watched entity's new state, or its removal.
    func take(_ event: JSONText, into store: inout EntityStore) -> EntityFollowingOutcome {
        guard !awaitingSnapshot else { return .nothing }
        do {
            guard let (id, newState) = try StateChangedEvent.read(event, watching: selection) else { return .nothing }
            return .changes(store.set(id, fullState: newState))
        } catch {
            return .skipped("ignored a malformed state_changed event: \(error)")
        }
    }

    /// `get_states`' result: every entity Home Assistant has, of which the store keeps the selected.
    func takeSnapshot(_ result: JSONValue, into store: inout EntityStore) -> EntityFollowingOutcome {
        guard case .array(let states) = result else { return Self.noSnapshot }
        awaitingSnapshot = false
        return .snapshot(store.replace(withFullStates: states, keeping: selection),
                         knownIDs: states.compactMap { $0["entity_id"]?.stringValue })
    }
}
