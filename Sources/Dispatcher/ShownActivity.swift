import Platform
import LiveActivity

/// What a lane knows of the activity on the phone, for the budget: what it shows (a digest, to drop duplicates, and
/// its measure, to judge a small move), when it was started (settle, renewal), when the last push went
/// (`min_interval`) and the updates of the last hour (`max_per_hour`).
struct ShownActivity: Sendable {
    typealias Instant = Moment

    /// A digest of the body the phone shows now, as far as we know (nil: unknown).
    var digest: String?
    /// What the phone shows, measured: later updates are judged against it. Measured when a budget first needs it
    /// (`measureIfNeeded`): most lanes never judge a small move, and measuring re-encodes the body.
    var measure: PayloadMeasure?
    /// The request the phone shows, not measured yet.
    var unmeasured: BackendRequest?
    /// When the activity now on the phone was started.
    var startedAt: Instant?
    var lastPush: Instant?
    /// Updates delivered in the last hour, oldest first (kept only with a `maxPerHour`).
    var sentUpdates = RollingWindow<Instant>()

    /// A start or an update reached the phone. `exactly`: the phone shows this body (false: an older state of the
    /// same activity, after an "already running").
    mutating func delivered(_ push: Push, at now: Instant, exactly: Bool, countingUpdates: Bool) {
        lastPush = now
        if push.kind == .start { startedAt = now }
        if push.kind == .update, countingUpdates { sentUpdates.record(now) }
        measure = nil
        unmeasured = push.request
        digest = exactly ? DeliveryState.digest(push.body) : nil
    }

    /// The activity ended: nothing is shown; the hour's count stays (it is the budget's, not the activity's).
    mutating func ended() {
        digest = nil
        lastPush = nil
        startedAt = nil
        measure = nil
        unmeasured = nil
    }

    /// Measures what the phone shows, if that is not done yet.
    mutating func measureIfNeeded() {
        guard let request = unmeasured else { return }
        measure = PayloadMeasure(request)
        unmeasured = nil
    }

    /// The user swiped it away: what it showed is gone.
    mutating func swipedAway() {
        digest = nil
        measure = nil
        unmeasured = nil
    }
}
