import Platform
import LiveActivity

/// May a lane's waiting update go now: the budget's one decision, pure. In order: Home Assistant's settle after a
/// start (its token), the debounce, `max_wait` and `min_interval` (a render that was due already passed them), the
/// relay's reserve, `max_per_hour`; then a marked change is rendered, a duplicate of what the phone shows is dropped,
/// and a small move under `min_change` (or while the budget is tight) waits for a quiet. Urgent updates skip the
/// budget. The lane keeps the counts and acts on the verdict.
enum UpdateGate {
    typealias Instant = Moment

    /// What the lane knows beside the update: the rule's budget, the relay, when it renews, and what the phone shows
    /// (with the activity's times and the hour's updates).
    struct Situation {
        var budget: UpdateBudget
        var relay: ActivityLane.RelayAllowance
        /// When the activity is renewed: no wait goes past it.
        var renewAt: Instant?
        var shown: ShownActivity
    }

    enum Verdict: Equatable {
        /// Wait until then (nil: until something changes); the reason, when it is a hold rather than the debounce.
        case hold(ActivityLane.Hold?, until: Instant?)
        /// Render the marked change now.
        case render
        /// The phone shows exactly this: drop it.
        case duplicate
        /// A small move: wait for a quiet, then it goes as the last state.
        case notWorthAPush(until: Instant?)
        case send(Push)
    }

    /// `first`, `last`: when the update's first and latest changes came.
    static func verdict(for pending: PendingUpdate, first: Instant, last: Instant, in situation: Situation, at now: Instant) -> Verdict {
        let budget = situation.budget, renewAt = situation.renewAt
        func until(_ instant: Instant?) -> Instant? { earliest(instant, renewAt) }
        let urgent = pending.push?.isUrgent ?? pending.urgent
        // Home Assistant needs the activity's own token before an update, or it opens a second activity.
        if let settle = budget.settle, settle > .zero, let startedAt = situation.shown.startedAt, now < startedAt.advanced(by: settle) {
            return .hold(.startSettle, until: until(startedAt.advanced(by: settle)))
        }
        if !urgent && !pending.timingPassed {
            let due = budget.due(firstChange: first, lastChange: last, lastPush: situation.shown.lastPush)
            // A debounce's wait is every change's; min_interval's is a hold.
            let spacing = situation.shown.lastPush.map { $0.advanced(by: budget.minInterval) }
            guard due <= now else { return .hold(spacing == due ? .minInterval : nil, until: until(due)) }
        }
        // What is left of the hour's budget and the relay's.
        if !urgent, case .reserved(let reservedUntil) = situation.relay { return .hold(.relayBudget, until: until(reservedUntil)) }
        if !urgent, let cap = budget.maxPerHour, let blocking = situation.shown.sentUpdates.blocking(limit: cap) {
            return .hold(.hourlyBudget, until: until(blocking.advanced(by: ActivityLane.hour)))
        }
        if pending.needsRender { return .render }
        guard let update = pending.push else { return .hold(nil, until: renewAt) }
        if DeliveryState.digest(update.body) == situation.shown.digest { return .duplicate }
        // Worth a push? Under min_change, or with the budget tight, a small move of the bar or the timers waits for
        // a quiet and then goes as the last state.
        if !urgent, let threshold = smallMoveThreshold(budget, relay: situation.relay, sentUpdates: situation.shown.sentUpdates.count),
           let shown = situation.shown.measure,
           let request = update.request, !PayloadMeasure(request).matters(after: shown, threshold: threshold) {
            let quietEnd = last.advanced(by: UpdateBudget.quiet)
            if now < quietEnd { return .notWorthAPush(until: until(quietEnd)) }
        }
        return .send(update)
    }

    /// The smallest move worth a push when one is judged at all: under `min_change`, or with the budget tight (the
    /// relay thin, or a third of `max_per_hour` left); nil otherwise, and nothing needs measuring.
    static func smallMoveThreshold(_ budget: UpdateBudget, relay: ActivityLane.RelayAllowance, sentUpdates: Int) -> MinChange? {
        if let minChange = budget.minChange { return minChange }
        let tight = relay == .thin || budget.maxPerHour.map { $0 - sentUpdates <= budget.tightAt } == true
        return tight ? MinChange.tightBudget : nil
    }

    static func earliest(_ a: Instant?, _ b: Instant?) -> Instant? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }
}
