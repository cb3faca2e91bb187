public import LiveActivity

/// Renders an activity's payload when the dispatcher is about to send it: updates are pulled when their budget lets
/// them go, so a burst of changes inside one debounce window costs one render, not one per change.
public protocol PayloadSource: Sendable {
    /// The request for `activity` at `target` (a lane's name), rendered from the newest states; nil when it cannot be rendered now
    /// (the reason is reported where the rules are evaluated).
    func payload(activity: String, target: String, kind: PushKind) async -> BackendRequest?

    /// The same, rendered at once by a source whose work runs on the dispatcher's own executor (the daemon's engine
    /// and dispatcher share the socket's thread): the lane goes on without a task and a hop per render. Called only
    /// from the dispatcher's isolation; `.elsewhere` sends it to `payload`.
    func payloadAtOnce(activity: String, target: String, kind: PushKind) -> RenderedAtOnce

    /// An activity to renew at `target`: its end and its start, both of what it shows now (the end with no final
    /// content, cleared at once); nil when it is not active now.
    func renewal(activity: String, target: String) async -> (end: BackendRequest, start: BackendRequest)?
}

/// A payload rendered where the dispatcher runs, or word that it is rendered elsewhere (asynchronously).
public enum RenderedAtOnce: Sendable {
    case rendered(BackendRequest?)
    case elsewhere
}

extension PayloadSource {
    public func payloadAtOnce(activity: String, target: String, kind: PushKind) -> RenderedAtOnce { .elsewhere }
}
