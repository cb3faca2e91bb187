import Platform
import LiveActivity

/// A lane's failed push going again: when, after how many attempts, and whether it waits for a place at the backend
/// (a free tier's one job, ActivitySmith's four at once) that an end elsewhere frees.
struct LaneRetry: Sendable {
    typealias Instant = Moment

    /// Not before then (nil: now).
    var at: Instant?
    var attempt = 0
    var waitsForAPlace = false

    /// The push got an answer that ends its retries (delivered, or refused for good).
    mutating func answered() {
        attempt = 0
        at = nil
    }

    /// The push goes again later: after the back-off (or the service's Retry-After), or when the lock lifts.
    mutating func again(after outcome: PushOutcome, policy: RetryPolicy, at now: Instant, random: Double) {
        let wait: Duration
        switch outcome {
        case .retry(let after):
            waitsForAPlace = false
            wait = policy.delay(attempt: attempt, random: random, retryAfter: after)
        case .locked(let expiry):
            waitsForAPlace = true
            wait = expiry ?? policy.lockedWait
        default:
            wait = policy.lockedWait
        }
        attempt += 1
        at = now.advanced(by: wait)
    }
}
