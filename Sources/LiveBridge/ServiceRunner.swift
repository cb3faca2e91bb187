import Glibc
public import Platform

/// Runs one service under Unix signals, the way a daemon is expected to behave: SIGTERM or SIGINT ask for its
/// graceful shutdown (`GracefulShutdown`); a second one while it shuts down ends the process at once; SIGHUP reloads it.
/// Cancelling the runner cancels the service (it stops at once).
public enum ServiceRunner {
    /// The default second stop: exit at once with 130, as a shell reports an interrupted command.
    public static let exitInterrupted: @Sendable () -> Void = { exit(130) }

    /// Returns when the service does, with its error if it threw. `signals` is read until then; `onSecondStop` is what
    /// a second SIGTERM/SIGINT does (by default the process exits with 130, as a shell reports an interrupted command).
    public static func run(_ service: some Service, signals: some AsyncSequence<UnixSignal, Never> & Sendable,
                           onSecondStop: @escaping @Sendable () -> Void = ServiceRunner.exitInterrupted) async throws {
        let shutdown = GracefulShutdown()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The signals, read while the service runs: a first stop asks for its graceful shutdown, a second ends the
            // process.
            group.addTask {
                var stops = 0
                for await signal in signals {
                    switch signal {
                    case .hangup:
                        await service.reload()
                    case .terminate, .interrupt:
                        stops += 1
                        if stops == 1 { shutdown.trigger() } else { onSecondStop() }
                    default:
                        break
                    }
                }
            }
            // The service's own end — or error — is the runner's.
            defer { group.cancelAll() }
            try await GracefulShutdown.$current.withValue(shutdown) { try await service.run() }
        }
    }
}
