import WebSocketTransport

/// Notices a dead link: a ping `interval` after authentication and after each pong; the link is given up when the
/// pong does not come within `timeout`.
struct Heartbeat {
    let interval: Duration
    let timeout: Duration

    /// A pong deadline met this late was passed while the loop was busy (the daemon's own work runs on it): the socket
    /// has not been read since, and libwebsockets runs due timers before it reads.
    static let late: Duration = .milliseconds(100)
    /// How long a second look waits, and how many a pong gets: a loop late every time still gives a dead link up.
    static let secondLook: Duration = .milliseconds(500)
    static let secondLooks = 3
    /// The ping waiting for its pong, and the timer that gives up on it.
    private(set) var awaited: (id: Int, timer: WebSocketEventLoop.TimerToken)?

    init(interval: Duration, timeout: Duration) {
        self.interval = interval
        self.timeout = timeout
    }

    mutating func sent(ping id: Int, timer: WebSocketEventLoop.TimerToken) { awaited = (id, timer) }

    /// The pong's timer, to cancel, if it answers the awaited ping.
    mutating func pong(id: Int) -> WebSocketEventLoop.TimerToken? {
        guard let awaited, awaited.id == id else { return nil }
        self.awaited = nil
        return awaited.timer
    }

    /// Whether `id` is the ping still waiting.
    func isAwaiting(_ id: Int) -> Bool { awaited?.id == id }

    /// The pong timer, to cancel when the link ends; nothing is awaited after.
    mutating func stop() -> WebSocketEventLoop.TimerToken? {
        defer { awaited = nil }
        return awaited?.timer
    }
}
