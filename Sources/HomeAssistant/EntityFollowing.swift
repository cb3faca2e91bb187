import JSON

/// How one socket follows the watched entities into the store: `subscribe_entities`' compressed events
/// (`EntitySubscription`), or `state_changed` events with `get_states` as the snapshot (`StateChangedFollowing`).
/// Made afresh for each socket and each change of selection; the connection sends its commands and hands it
/// what they bring.
protocol EntityFollowing: AnyObject {
    /// The subscription whose events carry the entities.
    var subscription: [String: JSONValue] { get }
    /// The command whose result is the snapshot, if it is not the subscription's first event.
    var snapshotCommand: [String: JSONValue]? { get }
    /// What the warning calls a refused subscription, and the reason the socket is then given up.
    var refusal: (warning: String, closeReason: String) { get }
    /// One event of the subscription, taken into `store`.
    func take(_ event: JSONText, into store: inout EntityStore) -> EntityFollowingOutcome
    /// A frame of this subscription's entity changes read where it stands (`EntityStore.readDiffFrame`): its parts,
    /// for the caller to apply in order and hand back to the store; nil, with nothing read, for any frame the
    /// general path must read.
    func readInPlace(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int, into store: inout EntityStore) -> [EntityStore.FramePart]?
    /// The snapshot command's result (or its failure), taken into `store`.
    func takeSnapshot(_ result: Result<JSONValue, HomeAssistantError>, into store: inout EntityStore) -> EntityFollowingOutcome
}

/// What an event or a snapshot did to the store.
enum EntityFollowingOutcome: Equatable {
    /// The snapshot is in: these changes, the ids Home Assistant has when the snapshot names them all, and what to
    /// warn of in it (entities it could not take).
    case snapshot([EntityChange], knownIDs: [String]?, warnings: [String] = [])
    case changes([EntityChange])
    /// Nothing to take (an event before the snapshot, an entity not watched).
    case nothing
    /// The event could not be read and was skipped; the text says why.
    case skipped(String)
    /// The socket cannot go on (no snapshot, or a malformed one): a fresh one brings a fresh snapshot. The reason
    /// it is closed with, and what to warn of first, if anything.
    case unusable(String, warning: String?)
}
