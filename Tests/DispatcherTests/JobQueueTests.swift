@testable import Dispatcher
import Testing

/// The dispatcher's queue of work for `run()`: jobs come out in order, and the one waiting task is woken by a job,
/// by a job that came before it waited, or by its cancellation.
@Suite(.timeLimit(.minutes(1)))
struct JobQueueTests {
    @Test func jobsComeOutOldestFirstAndOnce() {
        var queue = JobQueue<Int>()
        queue.append(1)
        queue.append(2)
        #expect(queue.takeAll() == [1, 2])
        #expect(queue.takeAll().isEmpty)
        queue.append(3)
        #expect(queue.takeAll() == [3])
    }

    @Test func aJobBeforeTheWaitMakesItReturnAtOnce() async {
        let arrival = JobQueue<Int>.Arrival()
        arrival.signal()
        arrival.signal()
        await arrival.wait()  // at once: signalled before (else the suite's time limit fails it)
        // A signal wakes a wait, whether the wait began before it or after.
        let waited = Task { await arrival.wait(); return Task.isCancelled }
        arrival.signal()
        #expect(await waited.value == false, "woken by the signal, not by a cancellation")
    }

    @Test func aCancelledWaitReturns() async {
        let arrival = JobQueue<Int>.Arrival()
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let waiting = Task {
            startedContinuation.yield()
            await arrival.wait()
        }
        for await _ in started { break }
        waiting.cancel()
        await waiting.value  // returns: the cancellation resumed it (the suite's time limit fails it otherwise)
        // A wait from a task already cancelled returns at once too.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await arrival.wait()
        }
        await cancelled.value
    }
}
