import Platform

/// The dispatcher's work waiting for `run()` to start it as its children, in order: jobs are added and taken on the
/// dispatcher, and `run()` waits here while there are none. An `AsyncStream` did this before, and each job through it
/// stepped off the dispatcher and back four times (its storage's `next` is not isolated to its caller).
struct JobQueue<Job>: ~Copyable {
    private var waiting: [Job] = []
    /// `run()` waiting for work, resumed by the next `append` or by its task's cancellation.
    let arrival = Arrival()

    mutating func append(_ job: Job) {
        waiting.append(job)
        arrival.signal()
    }

    /// The jobs waiting, oldest first; the queue is then empty.
    mutating func takeAll() -> [Job] {
        var taken: [Job] = []
        swap(&taken, &waiting)
        return taken
    }

    /// A wake for the one task that waits for jobs: `signal` resumes its wait, or makes its next wait return at once.
    final class Arrival: Sendable {
        private struct State {
            var waiter: UnsafeContinuation<Void, Never>?
            var signalled = false
        }
        private let state = Locked(State())

        func signal() {
            let waiter = state.withLock { s -> UnsafeContinuation<Void, Never>? in
                guard let waiter = s.waiter else { s.signalled = true; return nil }
                s.waiter = nil
                return waiter
            }
            waiter?.resume()
        }

        /// Returns once signalled since the last wait (at once if it was already), or once the task is cancelled.
        nonisolated(nonsending) func wait() async {
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    let now = state.withLock { s -> Bool in
                        guard !s.signalled, !Task.isCancelled else { s.signalled = false; return true }
                        // One `run()` at a time (as the stream before it trapped): a second waiter would take the
                        // first one's place, and the first would never return, even cancelled.
                        precondition(s.waiter == nil, "the dispatcher runs once at a time")
                        s.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                state.withLock { s -> UnsafeContinuation<Void, Never>? in
                    defer { s.waiter = nil }
                    return s.waiter
                }?.resume()
            }
        }
    }
}
