/// Back-off between tries of a failed push: exponential with jitter, capped; a server's Retry-After wins.
public struct RetryPolicy: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration
    /// How long a free-tier lock waits before trying again when nothing releases it sooner.
    public var lockedWait: Duration

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), lockedWait: Duration = .seconds(300)) {
        self.initial = initial
        self.maximum = maximum
        self.lockedWait = lockedWait
    }

    /// `random` in [0, 1); the delay lies in the upper half of the doubled-per-attempt ceiling.
    public func delay(attempt: Int, random: Double, retryAfter: Duration? = nil) -> Duration {
        if let retryAfter { return min(retryAfter, maximum * 10) }
        let grown = initial * (1 << min(attempt, 20))
        let ceiling = grown > maximum ? maximum : grown
        return ceiling / 2 + ceiling / 2 * min(max(random, 0), 1)
    }
}
