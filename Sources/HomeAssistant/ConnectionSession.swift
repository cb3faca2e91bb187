import WebSocketTransport

/// What exists only while one socket does: its requests, subscriptions and timers, and how it is ending. A new
/// socket gets a new session, so nothing of an old one (a late result, a timer) can act on the next: completions
/// and timers hold their session and act only while it is the connection's current one.
final class ConnectionSession {
    let socket: WebSocketConnection
    var requests: RequestTable
    var heartbeat: Heartbeat
    /// Timers that belong to this socket (handshake, authentication, start-up polls, stability), cancelled with it.
    var timers: [WebSocketEventLoop.TimerToken] = []
    /// How the watched entities are followed, and the id of its subscription.
    var following: (any EntityFollowing)?
    var followingID: Int?
    var eventSubscriptions: [Int: String] = [:]
    var templateSubscriptions: [Int: String] = [:]
    /// Why LiveBridge is closing it, when it is: what `disconnected` reports rather than the socket's own reason.
    var closeReason: String?
    /// Whether it reached ready: how it ends decides the back-off.
    var reachedReady = false
    /// Whether "waiting for Home Assistant to start" was said already.
    var reportedStartupWait = false

    init(socket: WebSocketConnection, heartbeat: Heartbeat, firstRequestID: Int) {
        self.socket = socket
        self.requests = RequestTable(firstID: firstRequestID)
        self.heartbeat = heartbeat
    }

    /// Cancels the socket's own timers (not the heartbeat's).
    func cancelTimers(on loop: WebSocketEventLoop) {
        for timer in timers { loop.cancel(timer) }
        timers = []
    }
}
