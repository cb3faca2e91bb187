/// A one-way signal: once `trigger()`ed, every `wait()` returns, also one that starts later. A wait also returns when
/// its task is cancelled. For ending a child task from outside it (a timer replaced by a nearer one, a graceful
/// shutdown) without cancelling the whole group it runs in.
public final class Latch: Sendable {
    private struct State {
        var triggered = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var next = 0
    }

    private let state = Locked(State())

    public init() {}

    public var isTriggered: Bool { state.withLock(\.triggered) }

    /// Releases every wait, now and later; later calls do nothing.
    public func trigger() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.triggered else { return [] }
            s.triggered = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once triggered, or once the waiting task is cancelled.
    nonisolated(nonsending) public func wait() async {
        let key = state.withLock { s -> Int in s.next += 1; return s.next }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.triggered || Task.isCancelled { return true }
                    s.waiters[key] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
    }

    /// Sleeps until `deadline` (on `sleeper`'s timers); false when the latch was triggered, or the task cancelled, first.
    nonisolated(nonsending) public func sleep(until deadline: ContinuousClock.Instant, on sleeper: any Sleeper = TaskSleeper()) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await sleeper.sleep(until: deadline)) != nil }
            group.addTask {
                await self.wait()
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
