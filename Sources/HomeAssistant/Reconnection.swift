import WebSocketTransport

/// Where the back-off between sockets stands: the attempts that failed in a row, and the timer of the next.
struct Reconnection {
    /// Failed attempts since the last stable link (0-based, as `ReconnectPolicy` counts).
    private(set) var attempt = 0
    /// The next attempt's timer, while one waits.
    var timer: WebSocketEventLoop.TimerToken?

    /// The wait before the next attempt under `policy`; the attempt is counted.
    mutating func nextDelay(_ policy: ReconnectPolicy, random: Double) -> Duration {
        defer { attempt += 1 }
        return policy.delay(attempt: attempt, random: random)
    }

    /// The next attempt comes after the first step again: the link was stable, or the settings changed.
    mutating func startOver() { attempt = 0 }
}
