import JSON

/// Following entities with `subscribe_entities`: the first event is the snapshot, the rest compressed changes.
/// Home Assistant filters by id only: for a domain a template iterates, every entity comes and the store keeps the
/// selected ones.
final class EntitySubscription: EntityFollowing {
    let subscription: [String: JSONValue]
    private var awaitingSnapshot = true

    init(_ selection: EntitySelection) {
        subscription = selection.needsEveryEntity ? ["type": "subscribe_entities"]
            : ["type": "subscribe_entities", "entity_ids": .array(selection.entityIDs.map(JSONValue.string))]
    }

    var snapshotCommand: [String: JSONValue]? { nil }
    var refusal: (warning: String, closeReason: String) { ("subscribe_entities failed", "could not subscribe to entities") }

    func take(_ event: JSONText, into store: inout EntityStore) -> EntityFollowingOutcome {
        if awaitingSnapshot {
            awaitingSnapshot = false
            do {
                var problems = EntityStore.SnapshotProblems()
                let changes = try store.replace(withSnapshot: event, problems: &problems)
                return .snapshot(changes, knownIDs: nil, warnings: problems.warnings(in: "the first subscribe_entities event"))
            } catch {
                // Cannot happen for a frame that parsed; if it does, a fresh connection brings a fresh snapshot.
                return .unusable("malformed entities snapshot: \(error)", warning: nil)
            }
        }
        do { return .changes(try store.apply(event)) } catch {
            return .skipped("ignored a malformed entities event: \(error)")
        }
    }

    /// Changes once the snapshot is in: the first event is the snapshot, which the general path reads.
    func readInPlace(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int, into store: inout EntityStore) -> [EntityStore.FramePart]? {
        awaitingSnapshot ? nil : store.readDiffFrame(frame, subscriptionID: subscriptionID)
    }

    /// There is no snapshot command: the snapshot is the first event.
    func takeSnapshot(_ result: Result<JSONValue, HomeAssistantError>, into store: inout EntityStore) -> EntityFollowingOutcome { .nothing }
}
