import FoundationEssentials
import Synchronization
import WebSocketTransport

/// Why the daemon cannot reach Home Assistant, said beside the connection's own "connection failed": the name does
/// not resolve, nothing listens, no answer. Probed by `run()` (a child of the service's run), not on the connection's
/// thread, at most once a minute while the failures go on, so a long outage is not a probe per retry.
final class ConnectFailureDiagnosis: Sendable {
    private let host: String
    private let port: Int
    private let url: String
    private let lastProbe = Mutex<ContinuousClock.Instant?>(nil)
    private let say: @Sendable (String) -> Void
    /// Probes asked for and not yet made: at most one waits (a failure while one waits asks nothing more).
    private let probes = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(endpoint: WebSocketEndpoint, url: String, say: @escaping @Sendable (String) -> Void) {
        host = endpoint.host
        port = endpoint.port
        self.url = url
        self.say = say
    }

    /// A connection attempt failed with `reason`: probe, unless one was made in the last minute.
    func failed(_ reason: String) {
        guard reason.hasPrefix("connection failed") else { return }
        let now = ContinuousClock.now
        let due = lastProbe.withLock { last -> Bool in
            if let last, now - last < .seconds(60) { return false }
            last = now
            return true
        }
        if due { probes.continuation.yield() }
    }

    /// Makes the probes asked for, until cancelled.
    func run() async {
        for await _ in probes.stream {
            if let problem = Reachability.problem(host: host, port: port) { say("Home Assistant at \(url) cannot be reached: \(problem)") }
        }
    }
}
