import HTTPClient
import Testing
import WebSocketTransport

/// Where a test's client runs its transfers: a thread of its own (commands), or an event loop's beside its sockets (the
/// daemon's backends), sent to from the loop's own thread (as the dispatcher does) or from another thread.
enum Driving: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ownThread, eventLoop, eventLoopFromAnotherThread
    var testDescription: String { rawValue }
}

/// The loop a hosted client runs on, for one test; shut down when the test lets it go.
final class ClientHost: Sendable {
    let driving: Driving
    let loop: WebSocketEventLoop?

    init(_ driving: Driving) throws {
        self.driving = driving
        if driving == .ownThread {
            loop = nil
        } else {
            var options = WebSocketEventLoop.Options()
            options.name = "http-host"
            options.usesTLS = false
            let loop = try WebSocketEventLoop(options: options)
            loop.start()
            self.loop = loop
        }
    }

    deinit { loop?.shutdown() }

    func client(_ options: HTTPClient.Options = HTTPClient.Options()) -> HTTPClient {
        HTTPClient(options: options, on: loop)
    }

    /// Runs `body` where the driving says the sends are made: on the loop's thread for `.eventLoop`.
    func sending<T>(_ body: () async throws -> T) async rethrows -> T {
        guard driving == .eventLoop, let loop else { return try await body() }
        return try await withTaskExecutorPreference(EventLoopExecutor(loop: loop)) { try await body() }
    }
}
