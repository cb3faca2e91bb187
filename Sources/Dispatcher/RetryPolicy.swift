import Platform
/// Back-off between tries of a failed push: exponential with jitter, capped, never shorter than `initial` (1 s): a
/// server's Retry-After only lengthens it, so `Retry-After: 0` cannot make a retry storm.
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

    /// The longest wait a `Retry-After` header is taken at; `delay` caps it again at ten times `maximum`.
    static let longestRetryAfter = Duration.seconds(86_400)

    /// A `Retry-After` header's delay in seconds (RFC 9110: a whole number; a decimal is taken too), clamped to a day;
    /// nil for what is not a number of seconds (`nan`, `-5`, an HTTP date), which leaves the usual back-off.
    public static func retryAfter(_ header: String) -> Duration? {
        let text = header.trimmingWhitespace()
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x65 || $0 == 0x45 || $0 == 0x2B }),
              let seconds = Double(text), seconds >= 0 else { return nil }
        guard seconds < 86_400 else { return longestRetryAfter }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// `random` in [0, 1); the delay lies in the upper half of the doubled-per-attempt ceiling, at least `initial`;
    /// a `retryAfter` (capped at ten times `maximum`) is waited when it is longer.
    public func delay(attempt: Int, random: Double, retryAfter: Duration? = nil) -> Duration {
        let backOff = max(initial, BackOff(initial: initial, maximum: maximum).delay(attempt: attempt, random: random))
        guard let retryAfter else { return backOff }
        return max(backOff, min(retryAfter, maximum * 10))
    }
}
