import Glibc
public import Platform

/// Runs one service under Unix signals, the way a daemon is expected to behave: SIGTERM or SIGINT cancel it (its
/// graceful shutdown); a second one while it shuts down ends the process at once; SIGHUP reloads it.
public enum ServiceRunner {
    /// The default second stop: exit at once with 130, as a shell reports an interrupted command.
    public static let exitInterrupted: @Sendable () -> Void = { exit(130) }

    /// Returns when the service does, with its error if it threw. `signals` is read until then; `onSecondStop` is what
    /// a second SIGTERM/SIGINT does (by default the process exits with 130, as a shell reports an interrupted command).
    public static func run(_ service: some Service, signals: some AsyncSequence<UnixSignal, Never> & Sendable,
                           onSecondStop: @escaping @Sendable () -> Void = ServiceRunner.exitInterrupted) async throws {
        let running = Task { try await service.run() }
        let watching = Task {
            var stops = 0
            for await signal in signals {
                switch signal {
                case .hangup:
                    await service.reload()
                case .terminate, .interrupt:
                    stops += 1
                    if stops == 1 { running.cancel() } else { onSecondStop() }
                default:
                    break
                }
            }
        }
        defer { watching.cancel() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            running.cancel()
        }
    }
}
