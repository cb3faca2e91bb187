/// Exponential back-off with jitter, capped: the ceiling doubles per attempt from `initial` up to `maximum`, and the
/// delay is drawn from its upper half, so clients restarted together spread out yet never hammer a server that has
/// just come back. Reconnecting to Home Assistant and retrying a push both wait this way.
public struct BackOff: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The ceiling for `attempt` (0-based), before jitter.
    public func ceiling(attempt: Int) -> Duration {
        let grown = initial * (1 << min(max(attempt, 0), 20))
        return grown > maximum ? maximum : grown
    }

    /// `random` is a number in [0, 1): tests pass fixed values, callers a random one.
    public func delay(attempt: Int, random: Double) -> Duration {
        let ceiling = ceiling(attempt: attempt)
        return ceiling / 2 + ceiling / 2 * min(max(random, 0), 1)
    }
}
