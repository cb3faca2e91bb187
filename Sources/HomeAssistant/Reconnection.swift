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

    /// Whether a link that ended for `reason` is dialled again from the first step: one that was ready and ended for an
    /// ordinary reason (a restart, a lost network) is; one ended by what Home Assistant sent (a message over the limit,
    /// text that is not UTF-8, a broken frame) keeps counting, so a server that does it every time is retried ever
    /// more slowly.
    static func startsOver(after reason: CloseReason, reachedReady: Bool) -> Bool {
        switch reason {
        case .messageTooLarge, .invalidUTF8, .protocolViolation: return false
        case .connectFailed, .closed, .closedByPeer, .closedLocally: return reachedReady
        }
    }
}
