import Dispatch
@testable import Dispatcher
import JSON
import LiveActivity
import Synchronization
import Testing

/// What a push costs in executor jobs: a job runs isolated to the dispatcher, and what it awaits (a backend's
/// `deliver`, marked `nonisolated(nonsending)`) runs there too, so a push is a few jobs, not a step off the dispatcher
/// and back at each await (about forty jobs a push on the daemon's loop before; each is a pass of its queue).
@Suite(.timeLimit(.minutes(1)))
struct DispatcherHopsTests {
    /// A serial executor (and the task executor its tasks prefer) that counts the jobs given to it.
    final class CountingExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
        private let queue = DispatchQueue(label: "livebridge.counting-executor")
        let jobs = Atomic<Int>(0)

        func enqueue(_ job: consuming ExecutorJob) {
            jobs.add(1, ordering: .relaxed)
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor()) }
        }
    }

    /// Answers at once, where its caller runs.
    struct Instant: PushBackend {
        let name = "aivi"
        let allowsOneActiveJob = false
        nonisolated(nonsending) func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            DeliveryReport(.delivered)
        }
    }

    static func submission(_ kind: PushKind, _ progress: Double) -> Dispatcher.Submission {
        let request = BackendRequest.aivi(backend: "aivi", slug: "washer", kind: kind, content: ["template": "generic", "progress": .double(progress)])
        return Dispatcher.Submission(activity: "washer", backend: "aivi", budget: UpdateBudget(),
                                     event: kind == .start ? .start(request) : .change(request, urgent: true))
    }

    @Test func aPushIsAFewJobsOfTheDispatchersExecutor() async throws {
        let executor = CountingExecutor()
        let dispatcher = Dispatcher(backends: [Instant()], executor: executor)
        let run = Task(executorPreference: executor) { await dispatcher.run() }
        defer { run.cancel() }
        #expect(await dispatcher.submit(Self.submission(.start, 0)))
        await dispatcher.waitUntilQuiet()
        let before = executor.jobs.load(ordering: .relaxed)
        let pushes = 20
        for n in 1...pushes {
            #expect(await dispatcher.submit(Self.submission(.update, Double(n) / 100)))
            await dispatcher.waitUntilQuiet()
        }
        let perPush = Double(executor.jobs.load(ordering: .relaxed) - before) / Double(pushes)
        #expect(await dispatcher.phase(activity: "washer", target: "aivi") == .running)
        // Each round here: the test's own two calls in and out of the dispatcher, the job's child task started and
        // handed to the dispatcher, the wait for quiet woken. Through an AsyncStream and nonisolated jobs it was 13.5; now about 7.
        #expect(perPush <= 11, "\(perPush) jobs a push")
    }

    /// A serial executor that numbers the executor jobs it runs (what a pass of the daemon's loop runs one of).
    final class NumberingExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
        private let queue = DispatchQueue(label: "livebridge.numbering-executor")
        /// The number of the executor job running now; read only on `queue` (by what runs there).
        nonisolated(unsafe) var running = 0

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async {
                self.running += 1
                job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor())
            }
        }
    }

    /// One send at a time, answered where it is called (never suspends); notes which executor job each send ran in.
    final class OnePlace: PushBackend, @unchecked Sendable {
        let name = "aivi"
        let allowsOneActiveJob = false
        var sendsAtOnce: Int? { 1 }
        let executor: NumberingExecutor
        let sentIn = Mutex<[Int]>([])
        init(_ executor: NumberingExecutor) { self.executor = executor }
        nonisolated(nonsending) func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            let job = executor.running
            sentIn.withLock { $0.append(job) }
            return DeliveryReport(.delivered)
        }
    }

    /// A send's report starts the next waiting lane's send in the same task (`run(chain:)`); with sends that never
    /// suspend, that chain would run a whole queue of lanes in one executor job, holding the daemon's loop (its
    /// socket unread) all the while. It lets the executor go every `chainSlice` jobs.
    @Test func aChainThatNeverSuspendsLetsTheExecutorGo() async throws {
        let executor = NumberingExecutor()
        let backend = OnePlace(executor)
        let dispatcher = Dispatcher(backends: [backend], executor: executor)
        let run = Task(executorPreference: executor) { await dispatcher.run() }
        defer { run.cancel() }
        let starts = (0..<100).map { n in
            Dispatcher.Submission(activity: "a\(n)", backend: "aivi", budget: UpdateBudget(), event: .start(
                BackendRequest.aivi(backend: "aivi", slug: "a\(n)", kind: .start, content: ["template": "generic", "progress": 0.5])))
        }
        await dispatcher.submit(starts)
        await dispatcher.waitUntilQuiet()
        let sentIn = backend.sentIn.withLock { $0 }
        #expect(sentIn.count == 100)
        let most = Dictionary(grouping: sentIn, by: { $0 }).values.map(\.count).max() ?? 0
        #expect(most <= Dispatcher.chainSlice, "\(most) sends in one executor job")
        #expect(most > 1, "the sends did chain (\(most) in one executor job at most)")
    }
}
