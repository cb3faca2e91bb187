public import HTTPClient
public import LiveActivity
import Platform

/// A service's request allowance over a rolling window (ActivitySmith: 60 requests a minute per key), kept on our
/// side so a burst waits its turn instead of drawing 429s. Pure arithmetic on the times it is given.
public struct RequestWindow: Sendable, Equatable {
    public let limit: Int
    public let seconds: Double
    /// When the requests of the last window were (or are booked to be) sent.
    private(set) var sent = RollingWindow<Double>()

    public init(limit: Int, seconds: Double) {
        precondition(limit > 0 && seconds > 0, "a window allows at least one request over some time")
        self.limit = limit
        self.seconds = seconds
    }

    /// Books a request asked for at `now` and returns how long it waits first (0: at once). A booked request counts
    /// from the moment it will be sent, so callers asking together are spread over the window.
    public mutating func book(at now: Double) -> Double {
        sent.forget(through: now - seconds)
        let at = sent.blocking(limit: limit).map { max(now, $0 + seconds) } ?? now
        sent.record(at)
        return at - now
    }
}

/// A `RequestWindow` on the monotonic clock, shared by every lane of one backend: `turn()` returns when the next
/// request may go.
final class RequestPacer: Sendable {
    let window: Locked<RequestWindow>
    private let origin = ContinuousClock.now

    init(_ window: RequestWindow) {
        self.window = Locked(window)
    }

    func turn() async {
        let elapsed = origin.duration(to: .now)
        let now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let wait = window.withLock { $0.book(at: now) }
        if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
    }
}

/// How a backend's requests go out: through its HTTP client, each first waiting its turn in the service's documented
/// allowance (`requestsPerMinute`, counted by address or by account as its definition says; the pacer shared by every
/// backend that spends the same allowance) — a create, a PATCH and a re-create alike, each at the moment it is sent; a
/// push refused before anything is sent books nothing. Made from the definition where the backend is made
/// (`TransportParts.sender`): backends send through it and pace nothing themselves.
public struct HTTPSender: Sendable {
    let client: HTTPClient
    let pacer: RequestPacer?

    /// Unpaced.
    public init(client: HTTPClient) {
        self.init(client: client, pacer: nil)
    }

    init(client: HTTPClient, pacer: RequestPacer?) {
        self.client = client
        self.pacer = pacer
    }

    /// Paced to `service`'s documented allowance (or `window`, a test's), with the pacer `pacers` holds for the address
    /// or the account (nil: one of its own).
    public static func paced(for service: BackendDefinition, baseURL: String, token: String, client: HTTPClient,
                             pacers: PacerRegistry? = nil, window: RequestWindow? = nil) -> HTTPSender {
        guard let window = window ?? service.requestsPerMinute.map({ RequestWindow(limit: $0, seconds: 60) }) else {
            return HTTPSender(client: client)
        }
        let key = PacerRegistry.key(service, baseURL: baseURL, token: service.allowanceCountedBy == .account ? token : nil)
        return HTTPSender(client: client, pacer: pacers?.pacer(key, window) ?? RequestPacer(window))
    }

    nonisolated(nonsending) public func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        await pacer?.turn()
        return try await client.send(request)
    }
}

/// The services' request limits that span backends: ActivitySmith's 60 a minute per account (its API key), PushWard's
/// 200 a minute per address (its host): one pacer per such key, shared by every backend that spends it, so two
/// backends with one key (or on one host) are paced together, as the service counts them.
public final class PacerRegistry: Sendable {
    private let pacers = Locked<[String: RequestPacer]>([:])
    private let stops = Locked<[String: Locked<Double?>]>([:])

    /// Until when an account's allowance is spent (a monthly quota), shared by the backends that use it.
    func spentUntil(_ key: String) -> Locked<Double?> {
        stops.withLock { stops in
            if let existing = stops[key] { return existing }
            let made = Locked<Double?>(nil)
            stops[key] = made
            return made
        }
    }

    public init() {}

    /// What a service's limit is kept under: the service and its address (one address however it is written: a
    /// trailing slash, letter case), and the account's token when it is counted per account (nil: per address).
    static func key(_ service: BackendDefinition, baseURL: String, token: String?) -> String {
        let address = (baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL).lowercased()
        return token.map { "\(service.kind.rawValue) \(address) \($0)" } ?? "\(service.kind.rawValue) \(address)"
    }

    func pacer(_ key: String, _ window: RequestWindow) -> RequestPacer {
        pacers.withLock { pacers in
            if let existing = pacers[key] { return existing }
            let made = RequestPacer(window)
            pacers[key] = made
            return made
        }
    }
}
