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

    /// `state_changed` events carry full states: read the general way.
    func readInPlace(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int, into store: inout EntityStore) -> [EntityStore.FramePart]? { nil }

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

    /// `get_states`' result: every entity Home Assistant has, of which the store keeps the selected. Failed or not a
    /// list, the socket is given up: a fresh one brings a fresh snapshot.
    func takeSnapshot(_ result: Result<JSONValue, HomeAssistantError>, into store: inout EntityStore) -> EntityFollowingOutcome {
        guard case .success(.array(let states)) = result else {
            return .unusable("could not read the states", warning: "get_states failed")
        }
        awaitingSnapshot = false
        var problems = EntityStore.SnapshotProblems()
        let changes = store.replace(withFullStates: states, keeping: selection, problems: &problems)
        return .snapshot(changes, knownIDs: states.compactMap { $0["entity_id"]?.stringValue }, warnings: problems.warnings(in: "get_states"))
    }
}
