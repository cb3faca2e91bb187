import Platform

/// A value that is replaced now and then, and a follower that waits for each new one: the newest wins, none is queued
/// (a follower that was busy sees only the latest). Waiting ends at a newer value or when the waiting task is
/// cancelled.
final class LatestValue<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var version = 0
        var waiters: [Int: (after: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter = 0
    }

    private let state = Locked(State())

    /// The value now (nil: never set).
    var value: Value? { state.withLock { $0.value } }

    /// Replaces the value; waiters wake.
    func set(_ value: Value) {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.value = value
            s.version += 1
            let woken = s.waiters.values.map(\.continuation)
            s.waiters = [:]
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// The value once its version is past `version`, with its version; nil when cancelled first.
    func next(after version: Int) async -> (Value, Int)? {
        await waitForChange(after: version)
        guard !Task.isCancelled else { return nil }
        return state.withLock { s in s.value.map { ($0, s.version) } }
    }

    /// Returns once the version is past `version`, or the waiting task is cancelled.
    func waitForChange(after version: Int) async {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { s -> Bool in
                    if s.version > version || Task.isCancelled { return true }
                    s.waiters[id] = (version, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { s in s.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }
}
