public import LiveActivity

/// Renders an activity's payload when the dispatcher is about to send it: updates are pulled when their budget lets
/// them go, so a burst of changes inside one debounce window costs one render, not one per change.
public protocol PayloadSource: Sendable {
    /// The request for `activity` at `target` (a lane's name), rendered from the newest states; nil when it cannot be rendered now
    /// (the reason is reported where the rules are evaluated).
    nonisolated(nonsending) func payload(activity: String, target: String, kind: PushKind) async -> BackendRequest?

    /// An activity to renew at `target`: its end and its start, both of what it shows now (the end with no final
    /// content, cleared at once); nil when it is not active now.
    nonisolated(nonsending) func renewal(activity: String, target: String) async -> (end: BackendRequest, start: BackendRequest)?
}
