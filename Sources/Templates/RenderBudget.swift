import Glibc

/// What one render of one template may spend: evaluation steps (an expression, a loop pass, an item a filter
/// walks, every 64 characters of text built) and wall-clock time. A normal template spends a few hundred steps;
/// exponential macros, quadratic concatenation or a filter over a huge list meet the bound and fail that field with
/// an `EvaluationError`, never the daemon.
///
/// The budget of the render running on this thread is found through a thread-specific slot, so the arithmetic,
/// filters and tests deep in an evaluation charge it without each being handed it. A render inside a render (a
/// macro, a `default`) shares the outer one's. Each thread keeps one budget for good and resets it per render: a
/// render costs no allocation, and no clock reading until it has done real work (the clock starts at the first
/// check, 4,096 steps in, which a normal template never reaches).
final class RenderBudget {
    static let steps = 1_000_000
    /// The time backstop, for work steps do not see (a slow allocator, a loaded machine).
    static let seconds = 2.0

    private var stepsLeft = RenderBudget.steps
    /// Set at the first clock check of a render.
    private var deadline: UInt64 = 0
    private var sinceClock = 0
    private var active = false

    private init() {}

    /// Runs `body` with a fresh budget unless a render on this thread already has one.
    static func render<T>(_ body: () throws(EvaluationError) -> T) throws(EvaluationError) -> T {
        let budget: RenderBudget
        if let raw = pthread_getspecific(slot) {
            budget = Unmanaged<RenderBudget>.fromOpaque(raw).takeUnretainedValue()
            if budget.active { return try body() }
        } else {
            // This thread's, kept until it ends (the slot's destructor releases it).
            budget = RenderBudget()
            pthread_setspecific(slot, Unmanaged.passRetained(budget).toOpaque())
        }
        budget.active = true
        budget.stepsLeft = Self.steps
        budget.sinceClock = 0
        budget.deadline = 0
        defer { budget.active = false }
        let result = try body()
        // Spent by work that could not throw (equality): the render fails all the same.
        if budget.stepsLeft <= 0 { throw EvaluationError("the template did too much work (over \(Self.steps) steps); a normal template needs a few hundred") }
        return result
    }

    /// Charges work that cannot throw (an equality deep in a value); false once the budget is spent, and the render
    /// fails when it ends.
    static func charge(_ steps: Int) -> Bool {
        guard let raw = pthread_getspecific(slot) else { return true }
        let budget = Unmanaged<RenderBudget>.fromOpaque(raw).takeUnretainedValue()
        guard budget.active else { return true }
        budget.stepsLeft -= max(steps, 0)
        if budget.stepsLeft < 0 { budget.stepsLeft = 0 }
        return budget.stepsLeft > 0
    }

    /// Charges `steps` to the running render (nothing when none runs: a caller outside `render` is not bounded).
    static func spend(_ steps: Int, _ what: @autoclosure () -> String) throws(EvaluationError) {
        guard let raw = pthread_getspecific(slot) else { return }
        let budget = Unmanaged<RenderBudget>.fromOpaque(raw).takeUnretainedValue()
        guard budget.active else { return }
        budget.stepsLeft -= max(steps, 0)
        guard budget.stepsLeft >= 0 else {
            budget.stepsLeft = 0
            throw EvaluationError("the template did too much work (over \(Self.steps) steps, at \(what())); a normal template needs a few hundred")
        }
        budget.sinceClock += max(steps, 1)
        if budget.sinceClock >= 4_096 {
            budget.sinceClock = 0
            let now = monotonicNanoseconds()
            if budget.deadline == 0 {
                budget.deadline = now + UInt64(Self.seconds * 1e9)
            } else if now > budget.deadline {
                budget.stepsLeft = 0
                throw EvaluationError("the template ran for over \(Self.seconds) seconds (at \(what()))")
            }
        }
    }

    /// Charges the building of `count` characters (or items): one step per 64.
    static func spendBuilding(_ count: Int, _ what: @autoclosure () -> String) throws(EvaluationError) {
        try spend(count / 64 + 1, what())
    }

    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in if let raw { Unmanaged<RenderBudget>.fromOpaque(raw).release() } }
        return key
    }()

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
