import Dispatch

/// Runs Swift concurrency's jobs on a `WebSocketEventLoop`'s thread, between its passes over the sockets.
///
/// Actors and tasks that use it share the thread that reads the socket: what one read brings in is handled there,
/// without waking another thread and waiting for it, a hand-over that cost more CPU than the handling on a small
/// machine (`docs/performance.md`). A job never runs inside a libwebsockets callback, only after the pass.
///
/// Whatever runs on it holds up the socket while it runs: blocking work belongs elsewhere. Once the loop has stopped,
/// jobs run one at a time on a queue of the executor's own, so an actor outliving its connection still finishes.
public final class EventLoopExecutor: SerialExecutor, TaskExecutor {
    /// The loop its jobs run on; what else belongs on that thread (the backends' HTTP, `HTTPClient(on:)`) is driven there.
    public let loop: WebSocketEventLoop
    private let afterTheLoop: DispatchQueue

    public init(loop: WebSocketEventLoop) {
        self.loop = loop
        afterTheLoop = DispatchQueue(label: "\(loop.options.name).after-the-loop")
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueue(UnownedJob(job), on: self)
    }

    func run(_ job: UnownedJob) {
        job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
    }

    /// After the loop took its last job: one at a time still, in order.
    func runAfterTheLoop(_ job: UnownedJob) {
        afterTheLoop.async { self.run(job) }
    }
}
