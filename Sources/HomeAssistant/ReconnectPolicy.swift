import Platform

/// How long to wait before the next connection attempt: exponential back-off with full jitter, capped.
///
/// Attempt 0 waits `initial` at most; each failed attempt doubles the ceiling up to `maximum`.
/// The delay is drawn uniformly from the upper half of the ceiling, so clients restarted together spread out
/// but never hammer a server that has just come back.
public struct ReconnectPolicy: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration
    /// How long a connection must stay ready before the back-off starts again from `initial`: a server that
    /// accepts, sends the snapshot, then something that forces a reconnect (invalid UTF-8, an oversized frame) is
    /// retried ever more slowly instead of every second for ever.
    public var stableAfter: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), stableAfter: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
        self.stableAfter = stableAfter
    }

    /// The ceiling for `attempt` (0-based), before jitter.
    public func ceiling(attempt: Int) -> Duration { BackOff(initial: initial, maximum: maximum).ceiling(attempt: attempt) }

    /// `random` is a number in [0, 1): tests pass fixed values, the connection passes a random one.
    public func delay(attempt: Int, random: Double) -> Duration { BackOff(initial: initial, maximum: maximum).delay(attempt: attempt, random: random) }
}
