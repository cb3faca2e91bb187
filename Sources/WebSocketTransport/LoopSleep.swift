public import Platform

/// A task's sleep kept on an event loop's timers (`WebSocketEventLoop.sleep(until:)`): resumed once, by the timer,
/// by its task's cancellation, or by the loop's end (the task then finishes its sleep with `Task.sleep`).
final class LoopSleep: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, any Error>?
        var outcome: Result<Bool, any Error>?
        var timer: WebSocketEventLoop.TimerToken?
    }
    private let state = Locked(State())

    /// The suspended task: resumed at once if the sleep already finished (cancelled before it began).
    func suspend(_ continuation: CheckedContinuation<Bool, any Error>) {
        let outcome = state.withLock { state -> Result<Bool, any Error>? in
            if state.outcome == nil { state.continuation = continuation }
            return state.outcome
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// The loop's timer for it; false when the sleep already finished (the timer is not needed).
    func armed(_ timer: WebSocketEventLoop.TimerToken) -> Bool {
        state.withLock { state in
            guard state.outcome == nil else { return false }
            state.timer = timer
            return true
        }
    }

    /// Ends the sleep with `outcome` (true: the deadline came; false: the loop ended), the first time only; the
    /// loop's timer, if one was armed, is returned for cancelling.
    func finish(_ outcome: Result<Bool, any Error>) -> WebSocketEventLoop.TimerToken? {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<Bool, any Error>?, WebSocketEventLoop.TimerToken?) in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = outcome
            defer { state.continuation = nil; state.timer = nil }
            return (state.continuation, state.timer)
        }
        continuation?.resume(with: outcome)
        return timer
    }
}

extension WebSocketEventLoop: Sleeper {
    /// How late a sleep on the loop may end: it ends with the first pass after its deadline, and the loop wakes for it
    /// alone only this much later. Under a flood the lanes' timer then costs no wake of its own; 10 ms is nothing to a
    /// push budget counted in seconds.
    public static let sleepTolerance: Duration = .milliseconds(10)

    /// Sleeps on the loop's own timers (within `sleepTolerance`): at the deadline the task's job is queued on the loop's
    /// thread, which wakes for its timer anyway, and no other thread is woken (`Task.sleep` wakes a thread of the pool, which then wakes the
    /// loop). Cancelling the task removes the timer. If the loop stops first, the rest is slept with `Task.sleep`.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        let sleep = LoopSleep()
        let onTheLoop = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                sleep.suspend(continuation)
                if isInEventLoop { arm(sleep, at: deadline) }
                else if !perform({ [self] in arm(sleep, at: deadline) }) { _ = sleep.finish(.success(false)) }
            }
        } onCancel: {
            guard let timer = sleep.finish(.failure(CancellationError())) else { return }
            if isInEventLoop { disarm(sleep, timer) } else { perform { [self] in disarm(sleep, timer) } }
        }
        if !onTheLoop { try await Task.sleep(until: deadline, clock: .continuous) }
    }

    private func arm(_ sleep: LoopSleep, at deadline: ContinuousClock.Instant) {
        preconditionInEventLoop()
        guard !jobsMoved else { _ = sleep.finish(.success(false)); return }
        let key = ObjectIdentifier(sleep)
        let timer = schedule(at: deadline, tolerance: Self.sleepTolerance) { [self] in
            sleeps[key] = nil
            _ = sleep.finish(.success(true))
        }
        if sleep.armed(timer) { sleeps[key] = sleep } else { cancel(timer) }
    }

    private func disarm(_ sleep: LoopSleep, _ timer: TimerToken) {
        preconditionInEventLoop()
        cancel(timer)
        sleeps[ObjectIdentifier(sleep)] = nil
    }
}
