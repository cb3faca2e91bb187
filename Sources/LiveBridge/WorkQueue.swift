import Platform

/// Items handed from another thread (a C event loop's callbacks) to one consumer task, in order, until finished.
/// Unlike an AsyncStream it does not end when the consuming task is cancelled: what must go on through a shutdown
/// (the status listener's answers) ends when its owner says so.
final class WorkQueue<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var waiter: CheckedContinuation<Item?, Never>?
        var finished = false
    }

    private let state = Locked(State())

    /// Queues an item; false once finished (the item is not taken).
    @discardableResult
    func add(_ item: Item) -> Bool {
        let (taken, waiter) = state.withLock { s -> (Bool, CheckedContinuation<Item?, Never>?) in
            guard !s.finished else { return (false, nil) }
            if let waiter = s.waiter {
                s.waiter = nil
                return (true, waiter)
            }
            s.items.append(item)
            return (true, nil)
        }
        waiter?.resume(returning: item)
        return taken
    }

    /// The next item, waiting for one; nil once finished and empty. One consumer at a time.
    func next() async -> Item? {
        await withCheckedContinuation { continuation in
            let ready: Item?? = state.withLock { s in
                if !s.items.isEmpty { return .some(s.items.removeFirst()) }
                if s.finished { return .some(nil) }
                precondition(s.waiter == nil, "WorkQueue has one consumer")
                s.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// No more items: the consumer gets what is queued, then nil.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Item?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.items.isEmpty ? s.waiter : nil
        }
        waiter?.resume(returning: nil)
    }
}
