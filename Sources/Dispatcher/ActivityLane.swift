import LiveActivity

/// One activity at one backend: its lifecycle (idle → starting → running → ending → idle) and its update budget.
/// An end that leaves final content on the phone (Home Assistant's `dismiss_after`) goes ending → dismissing → ending
/// → idle: the clear is sent when its time comes, unless a new start comes first and takes the activity over.
///
/// Pure: it is told what changed and what the backend answered, with the time, and says what to send next and when
/// to look again. One push at a time; order kept; a newer update replaces a queued one (only the latest matters);
/// an end is never replaced or dropped; starts, ends and urgent changes skip the budget.
///
/// Updates are pulled: `markChanged` notes that the payload changed without rendering it, and when the budget lets
/// the update go, `next` answers `.render`; the caller renders the payload then, once, and hands it to `rendered`.
/// However many changes a debounce window holds, one payload is rendered for it.
public struct ActivityLane: Sendable {
    public typealias Instant = ContinuousClock.Instant

    public enum Phase: String, Sendable {
        case idle, starting, running, ending
        /// The end's final content is on the phone; the clear waits for its time.
        case dismissing
    }

    /// What to do now.
    public enum Decision: Sendable, Equatable {
        case send(Push)
        /// Render the payload of this kind now (from the newest states) and hand it to `rendered(_:at:)`.
        case render(PushKind)
        /// Nothing to send before this instant (nil: nothing until something changes).
        case wait(until: Instant?)
    }

    public struct Counters: Sendable, Equatable {
        /// Updates replaced by a newer one before they went out.
        public var debounced = 0
        /// Updates not sent because the phone already shows exactly that.
        public var deduplicated = 0
        public var retries = 0
        public var dropped = 0
    }

    /// The rule's budget; a lane restored for a pending clear takes it from the rule's first submission.
    public internal(set) var budget: UpdateBudget
    public let retry: RetryPolicy
    public private(set) var phase = Phase.idle
    public private(set) var counters = Counters()
    /// A digest of the body the phone shows now, as far as we know.
    public private(set) var delivered: String?

    private var queuedEnd: Push?
    private var queuedStart: Push?
    private var queuedUpdate: Push?
    /// An update is due to be rendered when the budget allows (pulled, not pushed).
    private var pendingRender = false
    private var pendingUrgent = false
    /// The queued start's body is older than the states: render it again before it goes.
    private var refreshStart = false
    private var firstUnsentChange: Instant?
    private var lastChange: Instant?
    private var lastPush: Instant?
    private var inFlight: Push?
    /// The clear after an end's final content, and when it goes.
    public private(set) var dismissal: (push: Push, at: Instant)?
    private var retryAt: Instant?
    private var attempt = 0

    /// `resuming`: restored from the state file, the activity is on the phone showing the body with this digest
    /// (nil: unknown); it goes on with updates, never a second start.
    public init(budget: UpdateBudget = UpdateBudget(), retry: RetryPolicy = RetryPolicy(), resuming: Bool = false, deliveredDigest: String? = nil) {
        self.budget = budget
        self.retry = retry
        if resuming {
            phase = .running
            delivered = deliveredDigest
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
    public var isQuiet: Bool { inFlight == nil && queuedEnd == nil && queuedStart == nil && queuedUpdate == nil && !pendingRender }

    // MARK: What changed

    /// `active_when` rose: start with this push's body.
    public mutating func start(_ push: Push, at now: Instant) {
        switch phase {
        case .idle, .ending, .dismissing:
            // (Re)started, perhaps while its end is on the way: start after it, with the newest body. The final
            // content still on the phone is taken over by the start (same tag): its clear is cancelled.
            if phase == .dismissing { phase = .idle }
            dismissal = nil
            queuedStart = push.retyped(.start, urgent: true)
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
        if queuedUpdate != nil || pendingRender { counters.debounced += 1 }
        pendingRender = false
        pendingUrgent = false
        let wasUrgent = queuedUpdate?.isUrgent ?? false
        queuedUpdate = push.retyped(.update, urgent: push.isUrgent || wasUrgent)
        lastChange = now
        if firstUnsentChange == nil { firstUnsentChange = now }
    }

    /// The payload changed while active, not rendered yet: it is rendered when the budget lets the update go
    /// (`next` answers `.render`). `urgent` (a status turning to failed) skips the budget.
    public mutating func markChanged(urgent: Bool = false, at now: Instant) {
        if queuedStart != nil {
            refreshStart = true
            return
        }
        guard phase == .starting || phase == .running, queuedEnd == nil else { return }
        if queuedUpdate != nil || pendingRender { counters.debounced += 1 }
        pendingUrgent = pendingUrgent || urgent || (queuedUpdate?.isUrgent ?? false)
        queuedUpdate = nil
        pendingRender = true
        lastChange = now
        if firstUnsentChange == nil { firstUnsentChange = now }
    }

    /// The payload `.render` asked for (nil: it could not be rendered, and nothing goes).
    public mutating func rendered(_ push: Push?, at now: Instant) {
        if refreshStart, let start = queuedStart {
            refreshStart = false
            queuedStart = (push ?? start).retyped(.start, urgent: true)
            return
        }
        guard pendingRender else { return }
        pendingRender = false
        pendingUrgent = false
        guard let push else {
            firstUnsentChange = nil
            lastChange = nil
            return
        }
        // Its budget is spent already: it goes now.
        queuedUpdate = push.retyped(.update, urgent: true)
    }

    /// `active_when` fell: end with this push's body. Never replaced, never dropped.
    public mutating func end(_ push: Push, at now: Instant) {
        if queuedStart != nil, phase == .idle || phase == .ending {
            // It never reached the phone (or is being ended already): nothing more to show.
            queuedStart = nil
            refreshStart = false
            if phase == .idle && inFlight == nil { return }
        }
        guard phase == .starting || phase == .running, queuedEnd == nil else { return }
        if queuedUpdate != nil || pendingRender { counters.debounced += 1 }
        queuedUpdate = nil
        pendingRender = false
        pendingUrgent = false
        firstUnsentChange = nil
        queuedEnd = push.retyped(.end, urgent: true)
    }

    // MARK: What to send

    public mutating func next(at now: Instant) -> Decision {
        guard inFlight == nil else { return .wait(until: nil) }
        if let retryAt, retryAt > now { return .wait(until: retryAt) }
        if let end = queuedEnd, phase == .running {
            return send(end, phase: .ending, clearing: \.queuedEnd)
        }
        if let (clear, at) = dismissal, phase == .dismissing {
            guard at <= now else { return .wait(until: at) }
            dismissal = nil
            inFlight = clear
            phase = .ending
            return .send(clear)
        }
        if let start = queuedStart, phase == .idle {
            if refreshStart { return .render(.start) }
            return send(start, phase: .starting, clearing: \.queuedStart)
        }
        guard queuedUpdate != nil || pendingRender, phase == .running, let first = firstUnsentChange, let last = lastChange else {
            return .wait(until: nil)
        }
        let urgent = queuedUpdate?.isUrgent ?? pendingUrgent
        let due = urgent ? now : budget.due(firstChange: first, lastChange: last, lastPush: lastPush)
        guard due <= now else { return .wait(until: due) }
        if pendingRender { return .render(.update) }
        guard let update = queuedUpdate else { return .wait(until: nil) }
        queuedUpdate = nil
        firstUnsentChange = nil
        lastChange = nil
        if DeliveryState.digest(update.body) == delivered {
            counters.deduplicated += 1
            return .wait(until: nil)
        }
        inFlight = update
        return .send(update)
    }

    private mutating func send(_ push: Push, phase next: Phase, clearing slot: WritableKeyPath<ActivityLane, Push?>) -> Decision {
        self[keyPath: slot] = nil
        inFlight = push
        phase = next
        return .send(push)
    }

    // MARK: What the backend said

    public mutating func finished(_ outcome: PushOutcome, at now: Instant, random: Double = 0.5) {
        guard let push = inFlight else { return }
        inFlight = nil
        switch outcome {
        case .delivered, .alreadyRunning:
            attempt = 0
            retryAt = nil
            switch push.kind {
            case .start, .update:
                phase = .running
                lastPush = now
                if outcome == .alreadyRunning {
                    // The phone shows an older state of it: send this content as an update, now.
                    delivered = nil
                    if queuedUpdate == nil && !pendingRender {
                        queuedUpdate = push.retyped(.update, urgent: true)
                        firstUnsentChange = now
                        lastChange = now
                    }
                } else {
                    delivered = DeliveryState.digest(push.body)
                }
            case .end:
                phase = .idle
                delivered = nil
                lastPush = nil
                if let clear = push.request?.dismissalRequest, let after = push.request?.dismissal?.after {
                    phase = .dismissing
                    dismissal = (Push(.end, body: clear.bodyBytes, isUrgent: true, request: clear), now.advanced(by: after))
                }
            }
        case .retry, .locked:
            counters.retries += 1
            let wait: Duration = if case .retry(let after) = outcome {
                retry.delay(attempt: attempt, random: random, retryAfter: after)
            } else {
                retry.lockedWait
            }
            attempt += 1
            retryAt = now.advanced(by: wait)
            requeue(push, at: now)
        case .rejected:
            counters.dropped += 1
            attempt = 0
            retryAt = nil
            switch push.kind {
            case .start: phase = .idle; queuedEnd = nil; queuedUpdate = nil
            case .end: phase = .idle; delivered = nil
            case .update: break
            }
        }
    }

    /// Shutting down: the queued update goes now, past the budget.
    public mutating func hurry() {
        if let update = queuedUpdate { queuedUpdate = update.retyped(.update, urgent: true) }
        if pendingRender { pendingUrgent = true }
    }

    /// A free-tier lock was released (the token's other job ended): try again now.
    public mutating func retryNow() {
        retryAt = nil
    }

    /// Puts a failed push back where it was, unless something newer took its place.
    private mutating func requeue(_ push: Push, at now: Instant) {
        switch push.kind {
        case .start:
            if queuedEnd != nil {
                // Ended before its start got through: the start may have reached the phone, so the end goes; the start does not.
                phase = .running
                queuedUpdate = nil
                pendingRender = false
                return
            }
            phase = .idle
            // The start carries the newest content that arrived while it was failing (rendered again if it was only marked).
            queuedStart = queuedStart ?? (queuedUpdate ?? push).retyped(.start, urgent: true)
            if pendingRender { refreshStart = true }
            pendingRender = false
            pendingUrgent = false
            queuedUpdate = nil
            firstUnsentChange = nil
            lastChange = nil
        case .end:
            phase = .running
            queuedEnd = push
        case .update:
            if queuedUpdate == nil && !pendingRender && queuedEnd == nil {
                queuedUpdate = push.retyped(.update, urgent: true)
                firstUnsentChange = now
                lastChange = now
            }
        }
    }
}
