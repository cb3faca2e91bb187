import Dispatch
import Dispatcher
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
}
