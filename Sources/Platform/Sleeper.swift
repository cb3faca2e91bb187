/// Where a task's timed wait is kept. Swift's own (`Task.sleep`) is the pool's timer: at the deadline a thread of the
/// pool wakes, and hands the task to its executor, waking that thread too. An event loop keeps it on its own timers
/// instead (`WebSocketEventLoop`), so a task running there is woken where it runs, with no other thread
/// (`docs/performance.md`: the dispatcher's timer fired about once per push).
public protocol Sleeper: Sendable {
    /// Returns at `deadline`; throws `CancellationError` when the task is cancelled first.
    func sleep(until deadline: ContinuousClock.Instant) async throws
}

/// `Task.sleep` on the continuous clock.
public struct TaskSleeper: Sleeper {
    public init() {}
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await Task.sleep(until: deadline, clock: .continuous)
    }
}
