import Platform

/// Something that runs until it is done, asked to finish, or cancelled (after swift-service-lifecycle's `Service`).
/// A graceful shutdown (`GracefulShutdown`, the runner's first SIGTERM) asks it to finish what is due within its own
/// deadline and return; cancellation stops it at once. Both are structured: no `stop()`. A service that cannot go on
/// throws.
public protocol Service: Sendable {
    func run() async throws
    /// Takes its configuration again (SIGHUP); a service without one ignores it.
    func reload() async
}

extension Service {
    public func reload() async {}
}

/// A request to finish what is due and return, apart from cancellation (which stops at once): a cancelled task's
/// children are all cancelled, and a daemon's last pushes need live children — the dispatcher's sends, its retries,
/// the connection they go out on. After swift-service-lifecycle's graceful shutdown; the runner sets `current`.
public final class GracefulShutdown: Sendable {
    private let latch = Latch()

    /// The shutdown the running service answers to (nil: only cancellation stops it).
    @TaskLocal public static var current: GracefulShutdown?

    public init() {}

    public var isTriggered: Bool { latch.isTriggered }

    /// Asks the service to finish; later calls do nothing.
    public func trigger() { latch.trigger() }

    /// Returns once triggered, or once the waiting task is cancelled.
    public func wait() async { await latch.wait() }
}

/// Returns when the current task's graceful shutdown is asked for, or when the task is cancelled (without a
/// `GracefulShutdown.current`, only then).
public func gracefulShutdown() async {
    await (GracefulShutdown.current ?? GracefulShutdown()).wait()
}
