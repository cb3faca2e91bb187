import Platform
import Synchronization
import Testing
import WebSocketTransport

/// Swift concurrency on an event loop's thread: actors and preferring tasks run there, one job at a time, and still
/// run once the loop has stopped.
struct EventLoopExecutorTests {
    /// An actor on the loop's executor that notices two of its jobs running at once.
    actor Probe {
        let executor: EventLoopExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        let loop: WebSocketEventLoop
        private let running = Atomic<Bool>(false)
        private(set) var steps = 0
        private(set) var overlaps = 0
        private(set) var offTheLoop = 0
        private var work = 0

        init(loop: WebSocketEventLoop, executor: EventLoopExecutor) {
            self.loop = loop
            self.executor = executor
        }

        func isOnTheLoop() -> Bool { loop.isInEventLoop }

        func step() {
            if running.exchange(true, ordering: .acquiringAndReleasing) { overlaps += 1 }
            if !loop.isInEventLoop { offTheLoop += 1 }
            for i in 0..<200 { work &+= i }  // a window for another job to overlap
            steps += 1
            running.store(false, ordering: .releasing)
        }
    }

    func clientLoop() throws -> WebSocketEventLoop {
        var options = WebSocketEventLoop.Options()
        options.usesTLS = false
        options.name = "executor-test"
        let loop = try WebSocketEventLoop(options: options)
        loop.start()
        return loop
    }

    @Test func anActorAndThePreferringTasksRunOnTheLoopsThread() async throws {
        let loop = try clientLoop()
        defer { loop.shutdown() }
        let executor = EventLoopExecutor(loop: loop)
        let probe = Probe(loop: loop, executor: executor)
        #expect(await probe.isOnTheLoop())
        #expect(!loop.isInEventLoop)
        let placed = await withTaskExecutorPreference(executor) {
            await withTaskGroup(of: Bool.self, returning: [Bool].self) { group in
                for _ in 0..<4 { group.addTask { loop.isInEventLoop } }
                var seen = [loop.isInEventLoop]
                for await onLoop in group { seen.append(onLoop) }
                return seen
            }
        }
        #expect(placed == [true, true, true, true, true], "the task and its children ran on the loop's thread")
    }

    /// Callers from the pool while the loop stops halfway: every call is answered and never two at once, also those
    /// after the stop, which run off the loop (its thread has ended).
    @Test(.timeLimit(.minutes(1))) func jobsRunOneAtATimeThroughTheLoopsStop() async throws {
        let loop = try clientLoop()
        let probe = Probe(loop: loop, executor: EventLoopExecutor(loop: loop))
        let callers = 400
        await withTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                if caller == callers / 2 {
                    group.addTask {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            DetachedThread.start { loop.shutdown(); done.resume() }
                        }
                    }
                }
                group.addTask { for _ in 0..<5 { await probe.step() } }
            }
        }
        // The loop has stopped: these run on the executor's own queue, one at a time still.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { for _ in 0..<5 { await probe.step() } } }
        }
        #expect(await probe.steps == callers * 5 + 500)
        #expect(await probe.overlaps == 0)
        #expect(await probe.offTheLoop >= 500)
        #expect(!(await probe.isOnTheLoop()))
    }

    /// A task that never stops running (it only yields) does not keep the loop from its sockets and its handed-over
    /// work: jobs run in slices. Without them the work below waits until the task gives up, three seconds after it
    /// saw the work asked for (timed from there: the test's own thread may be starved beside the other suites).
    @Test(.timeLimit(.minutes(1))) func aBusyTaskLeavesTheLoopToItsSocketsBetweenSlices() async throws {
        let loop = try clientLoop()
        defer { loop.shutdown() }
        let executor = EventLoopExecutor(loop: loop)
        let asked = Atomic<Bool>(false), handedOver = Atomic<Bool>(false)
        let clock = ContinuousClock()
        let (running, isRunning) = AsyncStream.makeStream(of: Void.self)
        let busy = Task(executorPreference: executor) {
            var seenAsked: ContinuousClock.Instant?
            var yields = 0
            isRunning.yield()
            while !handedOver.load(ordering: .acquiring) {
                if seenAsked == nil, asked.load(ordering: .acquiring) { seenAsked = clock.now }
                if let seenAsked, clock.now - seenAsked > .seconds(3) { break }
                await Task.yield()
                yields += 1
            }
            return (seenAsked.map { clock.now - $0 } ?? .zero, yields, loop.isInEventLoop)
        }
        for await _ in running { break }
        asked.store(true, ordering: .releasing)
        #expect(loop.perform { handedOver.store(true, ordering: .releasing) })
        let (took, yields, onLoop) = await busy.value
        #expect(onLoop)
        #expect(yields > 0)
        #expect(took < .seconds(3), "the handed-over work waited for the busy task: \(took)")
    }

    /// Jobs cut off by the end of a slice run first in the next, in the order they were taken, each once: the loop's
    /// two job lists trade places and keep their room (`runReadyJobs`), and none may lose, repeat or reorder a job.
    @Test(.timeLimit(.minutes(1))) func jobsCutOffByASliceRunNextInOrderOnce() async throws {
        let loop = try clientLoop()
        defer { loop.shutdown() }
        let executor = EventLoopExecutor(loop: loop)
        let ran = RunOrder()
        // Made from a job on the loop: all 600 wait in one list, and every 50th works 9 ms, so slices end mid-list.
        let tasks = await withTaskExecutorPreference(executor) {
            (0..<600).map { i in
                Task(executorPreference: executor) {
                    if i % 50 == 0 {
                        let clock = ContinuousClock(), start = clock.now
                        while clock.now - start < .milliseconds(9) {}
                    }
                    ran.order.withLock { $0.append(i) }
                }
            }
        }
        for task in tasks { await task.value }
        #expect(ran.order.withLock { $0 } == Array(0..<600))
    }

    final class RunOrder: Sendable { let order = Mutex<[Int]>([]) }
}
