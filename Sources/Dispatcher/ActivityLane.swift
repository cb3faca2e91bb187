public import Platform
public import LiveActivity

/// One activity at one target: its lifecycle (idle → starting → running → ending → idle) and its update budget.
/// An end that leaves final content on the phone (Home Assistant's `dismiss_after`) goes ending → dismissing → ending
/// → idle: the clear is sent when its time comes, unless a new start comes first and takes the activity over.
/// An activity the user swiped away is `dismissed`: nothing more is sent until the next start.
///
/// The budget: updates wait `settle` after a start; at most `maxPerHour` go in any hour; when few are left (or the
/// device's push relay runs low, `relay`) only updates that matter go — anything but the bar and the timers
/// changed, or those moved by `minChange` — and the others wait for a quiet (`UpdateBudget.quiet`) to send the last
/// state. `renewAfter` a start, the activity is ended and started again (`.renew`) before iOS ends it.
///
/// Pure: it is told what changed and what the backend answered, with the time, and says what to send next and when
/// to look again. One push at a time; order kept; a newer update replaces a queued one (only the latest matters);
/// an end is never replaced or dropped; starts, ends and urgent changes skip the budget.
///
/// Updates are pulled: `markChanged` notes that the payload changed without rendering it, and when the budget lets
/// the update go, `next` answers `.render`; the caller renders the payload then, once, and hands it to `rendered`.
/// However many changes a debounce window holds, one payload is rendered for it.
public struct ActivityLane: Sendable {
    public typealias Instant = Moment
    /// The span of `max_per_hour`.
    static let hour = Duration.seconds(3600)

    public enum Phase: String, Sendable {
        case idle, starting, running, ending
        /// The end's final content is on the phone; the clear waits for its time.
        case dismissing
        /// The user swiped it away: no updates and no end until the next start.
        case dismissed
    }

    /// What the device's push relay still allows (Home Assistant: 500 pushes per phone per UTC day).
    public enum RelayAllowance: Sendable, Equatable {
        case open
        /// Running low: only updates that matter.
        case thin
        /// The rest is kept for starts and ends: no updates until then (nil: unknown).
        case reserved(until: Instant?)
    }

    /// What to do now.
    public enum Decision: Sendable, Equatable {
        case send(Push)
        /// Render the payload of this kind now (from the newest states) and hand it to `rendered(_:at:)`.
        case render(PushKind)
        /// Time to renew: render an end and a start of the same content and hand them to `renewing(end:start:at:)`.
        case renew
        /// Nothing to send before this instant (nil: nothing until something changes).
        case wait(until: Instant?)
    }

    /// Why a queued update is held back (a debounce's short wait is not a hold: every change has one).
    public enum Hold: String, Sendable, CaseIterable {
        /// Home Assistant's activity token is not there yet after a start.
        case startSettle = "start_settle"
        /// The last push was less than `min_interval` ago.
        case minInterval = "min_interval"
        /// `max_per_hour` updates went out in the last hour.
        case hourlyBudget = "max_per_hour"
        /// The phone's Home Assistant relay keeps its last pushes of the day for ends.
        case relayBudget = "relay_budget"
        /// A small move under `min_change` (or while the budget is tight) waits for a quiet.
        case notWorthAPush = "min_change"
    }

    /// A count for each `Hold`. Five integers, not a dictionary: the dispatcher compares a lane's counts on every pump,
    /// and a dictionary keyed by a String-backed enum hashed the raw value's text on each lookup.
    public struct HoldCounts: Sendable, Equatable {
        private var startSettle = 0, minInterval = 0, hourlyBudget = 0, relayBudget = 0, notWorthAPush = 0

        public init() {}

        public subscript(reason: Hold) -> Int {
            get {
                switch reason {
                case .startSettle: startSettle
                case .minInterval: minInterval
                case .hourlyBudget: hourlyBudget
                case .relayBudget: relayBudget
                case .notWorthAPush: notWorthAPush
                }
            }
            set {
                switch reason {
                case .startSettle: startSettle = newValue
                case .minInterval: minInterval = newValue
                case .hourlyBudget: hourlyBudget = newValue
                case .relayBudget: relayBudget = newValue
                case .notWorthAPush: notWorthAPush = newValue
                }
            }
        }

        /// The reasons counted at least once, by their rules-file names.
        public var byName: [String: Int] {
            Dictionary(uniqueKeysWithValues: Hold.allCases.filter { self[$0] > 0 }.map { ($0.rawValue, self[$0]) })
        }
    }

    public struct Counters: Sendable, Equatable {
        /// Updates replaced by a newer one before they went out.
        public var debounced = 0
        /// Updates not sent because the phone already shows exactly that.
        public var deduplicated = 0
        public var retries = 0
        public var dropped = 0
        /// Updates held back as not worth a push (a small change while the budget is tight, or below min_change).
        public var held = 0
        /// Activities ended and started again before iOS's eight hours.
        public var renewals = 0
        /// Times an update began to be held, by why (each change of reason once).
        public var holds = HoldCounts()

        /// Another lane's counts added to these (the dispatcher's totals).
        mutating func add(_ other: Counters) {
            debounced += other.debounced
            deduplicated += other.deduplicated
            retries += other.retries
            dropped += other.dropped
            held += other.held
            renewals += other.renewals
            for reason in Hold.allCases { holds[reason] += other.holds[reason] }
        }
    }

    /// The rule's budget; a lane restored for a pending clear takes it from the rule's first submission.
    public internal(set) var budget: UpdateBudget
    public let retry: RetryPolicy
    public private(set) var phase = Phase.idle
    public private(set) var counters = Counters()
    /// What the phone shows, and the times the budget counts from.
    private var shown = ShownActivity()
    /// A digest of the body the phone shows now, as far as we know.
    public var delivered: String? { shown.digest }
    /// When the activity now on the phone was started (for settle and renewal).
    public var startedAt: Instant? { shown.startedAt }

    private var queuedEnd: Push?
    private var queuedStart: Push?
    /// The queued start is a renewal's (the same activity again, not a new rise of `active_when`).
    private var startRenews = false
    /// Swiped away while a renewal's end was on its way: once the end is through, the lane is `dismissed`.
    private var dismissedAfterEnd = false
    /// The update waiting for the budget: rendered, or only marked (rendered when it may go).
    private var pending = PendingUpdate()
    /// The queued start's body is older than the states: render it again before it goes.
    private var refreshStart = false
    /// A render `next` asked for, and whether a change came while it was out (the render may predate that change).
    private var rendering: Rendering?

    private enum Rendering {
        case asked, askedAndChanged
        /// What goes next was rendered before the last change: once it has gone, that change is marked again.
        case staleToSend
    }
    private var inFlight: Push?
    /// The clear after an end's final content, and when it goes.
    public private(set) var dismissal: (push: Push, at: Instant)?
    private var retrying = LaneRetry()
    /// The user swiped the activity away while `inFlight` was on its way: its answer, whatever it is and whatever
    /// happened to the lane since (an end, the next start), changes nothing.
    private var swipedInFlight = false
    /// Why the queued update waits now, if the budget holds it.
    public private(set) var hold: Hold?
    /// What the device's push relay allows, set by the dispatcher before it asks `next`.
    public var relay = RelayAllowance.open

    /// `resuming`: restored from the state file, the activity is on the phone showing the body with this digest
    /// (nil: unknown); it goes on with updates, never a second start.
    /// `startedAt`: when the activity on the phone was started (nil: now, as far as renewal is concerned).
    /// `dismissed`: the user swiped it away before the restart.
    public init(budget: UpdateBudget = UpdateBudget(), retry: RetryPolicy = RetryPolicy(), resuming: Bool = false, deliveredDigest: String? = nil,
                startedAt: Instant? = nil, dismissed: Bool = false) {
        self.budget = budget
        self.retry = retry
        if resuming {
            phase = dismissed ? .dismissed : .running
            shown.digest = deliveredDigest
            shown.startedAt = startedAt ?? .now
        }
    }

    /// Restored from the state file: the end's final content is on the phone, to be cleared with `push` at `at`.
    public init(budget: UpdateBudget, retry: RetryPolicy, dismissing push: Push, at: Instant) {
        self.budget = budget
        self.retry = retry
        phase = .dismissing
        dismissal = (push, at)
    }

    /// Nothing queued, nothing in flight (a clear waiting for its time is not queued: it has a time of its own).
    public var isQuiet: Bool { inFlight == nil && queuedEnd == nil && queuedStart == nil && pending.isEmpty }

    // MARK: What changed

    /// `active_when` rose: start with this push's body.
    public mutating func start(_ push: Push, at now: Instant) {
        switch phase {
        case .idle, .ending, .dismissing, .dismissed:
            // (Re)started, perhaps while its end is on the way: start after it, with the newest body. The final
            // content still on the phone is taken over by the start (same tag): its clear is cancelled. One the
            // user swiped away starts again at its next start.
            if phase == .dismissing || phase == .dismissed { phase = .idle }
            dismissal = nil
            queuedStart = push.retyped(.start, urgent: true)
            startRenews = false
            dismissedAfterEnd = false
            refreshStart = false
        case .starting, .running:
            change(push.retyped(.update, urgent: false), at: now)
        }
    }

    /// The payload changed while active, rendered already. An urgent push (a status turning to failed) skips the budget.
    public mutating func change(_ push: Push, at now: Instant) {
        if queuedStart != nil {
            // Not shown yet: the start itself carries the newest content.
            queuedStart = push.retyped(.start, urgent: true)
            refreshStart = false
            return
        }
        guard phase == .starting || phase == .running, queuedEnd == nil else { return }
        if !pending.isEmpty { counters.debounced += 1 }
        pending.replace(with: push, at: now)
    }

    /// The payload changed while active, not rendered yet: it is rendered when the budget lets the update go
    /// (`next` answers `.render`). `urgent` (a status turning to failed) skips the budget.
    public mutating func markChanged(urgent: Bool = false, at now: Instant) {
        if rendering == .asked { rendering = .askedAndChanged }
        if queuedStart != nil {
            refreshStart = true
            return
        }
        guard phase == .starting || phase == .running, queuedEnd == nil else { return }
        if !pending.isEmpty { counters.debounced += 1 }
        pending.mark(urgent: urgent, at: now)
    }

    /// The payload `.render` asked for (nil: it could not be rendered, and nothing goes). A change marked while it was
    /// rendered may be newer than what it read: what was rendered goes, and that change is marked again once it has
    /// (else it would be lost when no other change follows; rendering again at once could go on for ever in a flood).
    public mutating func rendered(_ push: Push?, at now: Instant) {
        let stale = rendering == .askedAndChanged
        rendering = nil
        if refreshStart, let start = queuedStart {
            refreshStart = false
            queuedStart = (push ?? start).retyped(.start, urgent: true)
            if stale { rendering = .staleToSend }
            return
        }
        guard pending.needsRender else { return }
        pending.rendered(push)
        if stale, pending.push != nil { rendering = .staleToSend }
    }

    /// The renewal `next` asked for: the end and the start of the same content (nil: not active now; asked again
    /// in a minute).
    public mutating func renewing(_ pair: (end: Push, start: Push)?, at now: Instant) {
        guard phase == .running, queuedEnd == nil, queuedStart == nil else { return }
        guard let pair else {
            shown.startedAt = now.advanced(by: .seconds(60)).advanced(by: .zero - (budget.renewAfter ?? .zero))
            return
        }
        counters.renewals += 1
        pending.clear()
        queuedEnd = pair.end.retyped(.end, urgent: true)
        queuedStart = pair.start.retyped(.start, urgent: true)
        startRenews = true
        refreshStart = false
    }

    /// The user swiped the activity away (Home Assistant told us): nothing more goes to it until the next start.
    public mutating func dismissedByUser() {
        if phase == .dismissing {
            // The final content was swiped away: nothing is left to clear.
            phase = .idle
            dismissal = nil
            return
        }
        if phase == .ending, queuedStart != nil, startRenews {
            // A renewal under way (its end on its way, its start queued behind it): the start must not bring back
            // what the user swiped away. The end goes on; once it is through, the lane is dismissed.
            queuedStart = nil
            startRenews = false
            refreshStart = false
            pending.clear()
            dismissedAfterEnd = true
            shown.swipedAway()
            return
        }
        guard phase == .running || phase == .starting else { return }
        phase = .dismissed
        swipedInFlight = inFlight != nil
        queuedEnd = nil
        queuedStart = nil
        refreshStart = false
        pending.clear()
        dismissal = nil
        // A back-off of what will not go again must not hold the next start.
        retrying = LaneRetry()
        shown.swipedAway()
    }

    /// `active_when` fell: end with this push's body. Never replaced, never dropped.
    public mutating func end(_ push: Push, at now: Instant) {
        if phase == .dismissed {
            // Gone from the phone already: nothing to end.
            phase = .idle
            queuedStart = nil
            return
        }
        if phase == .running, queuedEnd != nil, queuedStart != nil {
            // A renewal was queued: the real end takes its place, and nothing starts again.
            queuedStart = nil
            refreshStart = false
            queuedEnd = push.retyped(.end, urgent: true)
            return
        }
        if queuedStart != nil, phase == .idle || phase == .ending {
            // It never reached the phone (or is being ended already): nothing more to show.
            queuedStart = nil
            refreshStart = false
            if phase == .idle && inFlight == nil { return }
        }
        guard phase == .starting || phase == .running, queuedEnd == nil else { return }
        if !pending.isEmpty { counters.debounced += 1 }
        pending.clear()
        queuedEnd = push.retyped(.end, urgent: true)
    }

    // MARK: What to send

    public mutating func next(at now: Instant) -> Decision {
        guard inFlight == nil else { return .wait(until: nil) }
        if let retryAt = retrying.at, retryAt > now { return .wait(until: retryAt) }
        if let end = queuedEnd, phase == .running {
            // An end right after a start waits for the settle too: before Home Assistant has the activity's token, a
            // clear reaches no activity and the one on the phone would stay.
            if let settle = budget.settle, settle > .zero, let startedAt = shown.startedAt, now < startedAt.advanced(by: settle) {
                return .wait(until: startedAt.advanced(by: settle))
            }
            return send(end, phase: .ending, clearing: \.queuedEnd, at: now)
        }
        if let (clear, at) = dismissal, phase == .dismissing {
            guard at <= now else { return .wait(until: at) }
            dismissal = nil
            inFlight = clear
            phase = .ending
            return .send(clear)
        }
        if let start = queuedStart, phase == .idle {
            if refreshStart {
                rendering = .asked
                return .render(.start)
            }
            return send(start, phase: .starting, clearing: \.queuedStart, at: now)
        }
        if phase == .running, queuedEnd == nil, let renewAfter = budget.renewAfter, let startedAt = shown.startedAt {
            let renewAt = startedAt.advanced(by: renewAfter)
            if renewAt <= now { return .renew }
            if pending.isEmpty { return .wait(until: renewAt) }
        }
        let renewAt = budget.renewAfter.flatMap { after in shown.startedAt.map { $0.advanced(by: after) } }
        guard pending.push != nil || pending.needsRender, phase == .running, let first = pending.firstChange, let last = pending.lastChange else {
            return holding(nil, .wait(until: phase == .running ? renewAt : nil))
        }
        shown.sentUpdates.forget(through: now.advanced(by: .zero - Self.hour))
        // What the phone shows is measured only when the gate will judge a small move (measuring re-encodes it).
        if UpdateGate.smallMoveThreshold(budget, relay: relay, sentUpdates: shown.sentUpdates.count) != nil { shown.measureIfNeeded() }
        let situation = UpdateGate.Situation(budget: budget, relay: relay, renewAt: renewAt, shown: shown)
        switch UpdateGate.verdict(for: pending, first: first, last: last, in: situation, at: now) {
        case .hold(let reason, let until):
            return holding(reason, .wait(until: until))
        case .render:
            rendering = .asked
            return holding(nil, .render(.update))
        case .duplicate:
            pending.clear()
            counters.deduplicated += 1
            return .wait(until: renewAt)
        case .notWorthAPush(let until):
            if !pending.heldCounted { counters.held += 1 }
            pending.heldCounted = true
            return holding(.notWorthAPush, .wait(until: until))
        case .send(let update):
            pending.clear()
            inFlight = update
            markIfStale(at: now)
            return holding(nil, .send(update))
        }
    }

    /// Notes why the queued update waits (counting each change to a new reason once) and passes the decision on.
    private mutating func holding(_ reason: Hold?, _ decision: Decision) -> Decision {
        if reason != hold {
            hold = reason
            if let reason { counters.holds[reason] += 1 }
        }
        return decision
    }

    /// Updates left in this hour's budget (nil: no cap).
    public func updatesLeft(at now: Instant) -> Int? {
        budget.maxPerHour.map { cap in cap - shown.sentUpdates.count(after: now.advanced(by: .zero - Self.hour)) }
    }

    private mutating func send(_ push: Push, phase next: Phase, clearing slot: WritableKeyPath<ActivityLane, Push?>, at now: Instant) -> Decision {
        self[keyPath: slot] = nil
        inFlight = push
        phase = next
        hold = nil
        if push.kind == .start { markIfStale(at: now) }
        return .send(push)
    }

    /// What is going was rendered before the last change: that change waits as the next update.
    private mutating func markIfStale(at now: Instant) {
        guard rendering == .staleToSend else { return }
        rendering = nil
        markChanged(at: now)
    }

    // MARK: What the backend said

    public mutating func finished(_ outcome: PushOutcome, at now: Instant, random: @autoclosure () -> Double = 0.5) {
        guard let push = inFlight else { return }
        inFlight = nil
        retrying.waitsForAPlace = false
        if swipedInFlight {
            // Swiped away while it was on its way (e2e: the dismissal came while an update's call was in flight, and
            // its answer set the lane running again, so the end went to the dismissed activity).
            swipedInFlight = false
            if case .rejected = outcome { counters.dropped += 1 }
            return
        }
        switch outcome {
        case .delivered, .alreadyRunning:
            retrying.answered()
            switch push.kind {
            case .start, .update:
                phase = .running
                shown.delivered(push, at: now, exactly: outcome == .delivered, countingUpdates: budget.maxPerHour != nil)
                // Already running: the phone shows an older state of it; send this content as an update, now.
                if outcome == .alreadyRunning, pending.isEmpty { pending.resend(push, at: now) }
            case .end:
                phase = .idle
                shown.ended()
                if let after = push.request?.dismissal?.after { scheduleDismissal(of: push, at: now.advanced(by: after)) }
            }
        case .retry, .locked:
            counters.retries += 1
            retrying.again(after: outcome, policy: retry, at: now, random: random())
            requeue(push, at: now)
        case .rejected:
            counters.dropped += 1
            retrying.answered()
            switch push.kind {
            case .start: phase = .idle; queuedEnd = nil; pending.clear()
            case .end:
                phase = .idle
                shown.digest = nil
                // A two-phase end whose final frame was refused (its content, a preempted activity) still ends: the
                // end is always delivered, so its second phase goes at once.
                scheduleDismissal(of: push, at: now)
            case .update: break
            }
        }
        if dismissedAfterEnd, phase == .idle {
            dismissedAfterEnd = false
            phase = .dismissed
        }
    }

    /// A two-phase end's second phase (its clear), due at `due`; nothing for a one-phase end.
    private mutating func scheduleDismissal(of push: Push, at due: Instant) {
        guard let clear = push.request?.dismissalRequest else { return }
        phase = .dismissing
        dismissal = (Push(.end, body: clear.bodyBytes, isUrgent: true, request: clear), due)
    }

    /// Shutting down: the queued update goes now, past the budget.
    public mutating func hurry() {
        pending.hurry()
    }

    /// A free-tier lock was released (the token's other job ended): try again now.
    public mutating func retryNow() {
        retrying.at = nil
    }

    /// Whether the last push waits on the backend's limit of activities at once (a free tier's one job, ActivitySmith's
    /// four): an end elsewhere on that backend lets it try again at once.
    public var waitsForAPlace: Bool { retrying.waitsForAPlace }

    /// Puts a failed push back where it was, unless something newer took its place.
    private mutating func requeue(_ push: Push, at now: Instant) {
        switch push.kind {
        case .start:
            if queuedEnd != nil {
                // Ended before its start got through: the start may have reached the phone, so the end goes; the start does not.
                phase = .running
                pending.clear()
                return
            }
            phase = .idle
            // The start carries the newest content that arrived while it was failing (rendered again if it was only marked).
            queuedStart = queuedStart ?? (pending.push ?? push).retyped(.start, urgent: true)
            if pending.needsRender { refreshStart = true }
            pending.clear()
        case .end:
            phase = .running
            queuedEnd = push
        case .update:
            if pending.isEmpty && queuedEnd == nil { pending.resend(push, at: now) }
        }
    }
}
