import Dispatcher
import Foundation
import JSON
import LiveActivity
import Platform
import Testing

/// The dispatcher's run and flush at a shutdown: cancelled, they return at once whatever hangs; a graceful flush still
/// sends a retry due within its deadline.
@Suite(.timeLimit(.minutes(1)))
struct DispatcherShutdownTests {
    /// Pushes hang until cancelled (then answer retry); each call is told on `called`.
    final class HangingBackend: PushBackend, @unchecked Sendable {
        let name = "hang"
        let allowsOneActiveJob = false
        let (called, call) = AsyncStream.makeStream(of: Void.self)
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            call.yield()
            guard (try? await Task.sleep(for: .seconds(120))) != nil else { return DeliveryReport(.retry(after: nil)) }
            return DeliveryReport(.delivered, status: 200)
        }
    }

    /// The first `failures` pushes answer 503; later ones are delivered.
    final class FlakyBackend: PushBackend, @unchecked Sendable {
        let name = "flaky"
        let allowsOneActiveJob = false
        let failures: Int
        let calls = Locked(0)
        let (called, call) = AsyncStream.makeStream(of: Void.self)
        init(failures: Int) { self.failures = failures }
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            let n = calls.withLock { $0 += 1; return $0 }
            call.yield()
            return n <= failures ? DeliveryReport(.retry(after: nil), status: 503) : DeliveryReport(.delivered, status: 200)
        }
    }

    let budget = UpdateBudget(debounce: .milliseconds(50), maxWait: .milliseconds(300), minInterval: .milliseconds(100))

    func start(_ backend: String, _ id: String = "x") -> Dispatcher.Event {
        .start(BackendRequest(backend: backend, kind: .aivi, method: "POST", target: "/activity/\(id)", body: ["slug": .string(id), "state": "s"]))
    }

    @Test func cancellingRunWhilePushesHangReturnsAtOnce() async {
        let backend = HangingBackend()
        let dispatcher = Dispatcher(backends: [backend])
        let clock = ContinuousClock(), started: ContinuousClock.Instant
        let run = Task { await dispatcher.run() }
        for i in 0..<50 { await dispatcher.submit(activity: "a\(i)", backend: "hang", budget: budget, start("hang", "a\(i)")) }
        var calls = backend.called.makeAsyncIterator()
        for _ in 0..<50 { _ = await calls.next() }
        started = clock.now
        run.cancel()
        await run.value
        #expect(clock.now - started < .seconds(20), "the pushes hang for 120 s")
    }

    /// As the daemon's service does when it is cancelled rather than shut down gracefully: its dispatcher's run() is
    /// cancelled with it (a push in flight), and the flush from the cancelled task waits for nothing.
    @Test func aCancelledServicesFlushReturnsAtOnce() async {
        let backend = HangingBackend()
        let dispatcher = Dispatcher(backends: [backend])
        let clock = ContinuousClock()
        let (complete, took) = await withDiscardingTaskGroup(returning: (Bool, Duration).self) { group in
            group.addTask { await dispatcher.run() }
            await dispatcher.submit(activity: "a", backend: "hang", budget: budget, start("hang"))
            for await _ in backend.called { break }
            withUnsafeCurrentTask { $0?.cancel() }
            let started = clock.now
            let complete = await dispatcher.flush(deadline: .seconds(30))
            return (complete, clock.now - started)
        }
        #expect(!complete, "the push never got through")
        #expect(took < .seconds(20), "the deadline is 30 s: \(took)")
    }

    @Test func aGracefulFlushSendsARetryDueWithinItsDeadline() async {
        let backend = FlakyBackend(failures: 1)
        let dispatcher = Dispatcher(backends: [backend], retry: RetryPolicy(initial: .milliseconds(300), maximum: .seconds(1)))
        let run = Task { await dispatcher.run() }
        defer { run.cancel() }
        await dispatcher.submit(activity: "a", backend: "flaky", budget: budget, start("flaky"))
        for await _ in backend.called { break }
        #expect(await dispatcher.flush(deadline: .seconds(20)))
        #expect(backend.calls.withLock { $0 } == 2)
    }

    @Test func aGracefulFlushWithALongerBackOffEndsAtItsDeadline() async {
        let backend = FlakyBackend(failures: 1)
        let dispatcher = Dispatcher(backends: [backend], retry: RetryPolicy(initial: .seconds(40), maximum: .seconds(60)))
        let run = Task { await dispatcher.run() }
        defer { run.cancel() }
        await dispatcher.submit(activity: "a", backend: "flaky", budget: budget, start("flaky"))
        for await _ in backend.called { break }
        let clock = ContinuousClock(), started = clock.now
        #expect(await !dispatcher.flush(deadline: .milliseconds(300)))
        #expect(clock.now - started < .seconds(10))
        #expect(backend.calls.withLock { $0 } == 1)
    }
}
