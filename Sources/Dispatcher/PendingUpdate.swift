import Platform
import LiveActivity

/// A lane's update waiting for the budget: its rendered push, or a change not rendered yet (rendered when it may go,
/// once however many changes came), whether it skips the budget, and when its changes came (for the debounce and
/// `max_wait`). At most one: a newer change replaces it.
struct PendingUpdate: Sendable {
    typealias Instant = Moment

    /// The rendered update (nil: none, or only marked).
    var push: Push?
    /// A change was marked and is rendered when the budget lets it go.
    var needsRender = false
    /// The marked change skips the budget (a status turning to failed).
    var urgent = false
    /// When its first and latest changes came.
    var firstChange: Instant?
    var lastChange: Instant?
    /// It passed its timing (it was rendered when due): it goes as soon as the hour's budget lets it.
    var timingPassed = false
    /// It was counted as held (once per update).
    var heldCounted = false

    /// Nothing waits.
    var isEmpty: Bool { push == nil && !needsRender }

    /// A newer change, rendered: it replaces what waited (urgent if either rendered one was), timed from the first
    /// change not sent.
    mutating func replace(with newer: Push, at now: Instant) {
        let urgent = newer.isUrgent || (push?.isUrgent ?? false)
        self = PendingUpdate(push: newer.retyped(.update, urgent: urgent), firstChange: firstChange ?? now, lastChange: now)
    }

    /// A newer change, not rendered yet: rendered when it may go; urgent if it or what waited was.
    mutating func mark(urgent: Bool, at now: Instant) {
        let urgent = self.urgent || urgent || (push?.isUrgent ?? false)
        self = PendingUpdate(needsRender: true, urgent: urgent, firstChange: firstChange ?? now, lastChange: now)
    }

    /// The marked change rendered (nil: it could not be, and nothing goes). Its timing is spent already: it goes as
    /// soon as the hour's budget lets it.
    mutating func rendered(_ rendered: Push?) {
        guard let rendered else { return clear() }
        self = PendingUpdate(push: rendered.retyped(.update, urgent: urgent), firstChange: firstChange, lastChange: lastChange,
                             timingPassed: true)
    }

    /// A push that must go again at once (refused for now, or the phone shows an older state): an urgent update.
    mutating func resend(_ push: Push, at now: Instant) {
        self = PendingUpdate(push: push.retyped(.update, urgent: true), firstChange: now, lastChange: now)
    }

    /// Shutting down: what waits goes now, past the budget.
    mutating func hurry() {
        if let update = push { push = update.retyped(.update, urgent: true) }
        if needsRender { urgent = true }
    }

    /// Nothing waits any more (sent, replaced by an end, taken over by a start, swiped away).
    mutating func clear() { self = PendingUpdate() }
}
