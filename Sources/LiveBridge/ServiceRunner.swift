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
        let stop = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The signals, read while the service runs: a first stop cancels it, a second ends the process.
            group.addTask {
                var stops = 0
                for await signal in signals {
                    switch signal {
                    case .hangup:
                        await service.reload()
                    case .terminate, .interrupt:
                        stops += 1
                        if stops == 1 { stop.continuation.yield() } else { onSecondStop() }
                    default:
                        break
                    }
                }
            }
            // The service, beside a child waiting for the stop: the stop cancels the service (its graceful shutdown),
            // whose own end — or error — is the runner's.
            try await withThrowingTaskGroup(of: Bool.self) { running in
                running.addTask { try await service.run(); return true }
                running.addTask { for await _ in stop.stream { return false }; return false }
                while let serviceEnded = try await running.next() {
                    running.cancelAll()
                    if serviceEnded { return }
                }
            }
            group.cancelAll()
        }
    }
}
