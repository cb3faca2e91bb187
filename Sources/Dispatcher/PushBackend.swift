public import FoundationEssentials
import Platform
public import HTTPClient
import JSON
public import LiveActivity

/// One push service's transport; the dispatcher does not change for a new one (see `TransportService`).
public protocol PushBackend: Sendable {
    var name: String { get }
    /// Island Pulse's free tier: one active job per token.
    var allowsOneActiveJob: Bool { get }
    /// Runs where its caller runs (the dispatcher's lane): no step off and back for each push.
    nonisolated(nonsending) func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport
    /// How many sends its transport runs at once (an HTTP client's transfers to one host); the dispatcher holds the
    /// lanes past that itself. Nil: no bound (Home Assistant's WebSocket calls), every lane goes at once.
    var sendsAtOnce: Int? { get }
}

extension PushBackend {
    public var sendsAtOnce: Int? { nil }
}

/// How a push went, for the lifecycle and for the log (never with a token).
public struct DeliveryReport: Sendable, Equatable {
    public let outcome: PushOutcome
    /// The HTTP status, when there was an answer.
    public let status: Int?
    /// The backend's error code (`FREE_TIER_JOB_LOCKED`, `not_found`…) or the transport's.
    public let code: DeliveryCode?
    /// The longest backend code kept (a service's `error` field can be anything).
    public static let codeLimit = 120
    /// New connections the push opened (0 when a kept-alive one carried it).
    public var connectionsOpened = 0

    public init(_ outcome: PushOutcome, status: Int? = nil, code: DeliveryCode? = nil) {
        self.outcome = outcome
        self.status = status
        self.code = code
    }

    /// A request whose target is no path under the service's base URL is never sent (`invalid_target`): the token
    /// goes to the service's own paths only, whatever the target came from.
    static func invalidTarget(_ request: BackendRequest) -> DeliveryReport? {
        BackendKind.pathProblem(request.target) == nil ? nil : DeliveryReport(.rejected(.invalidTarget), code: .invalidTarget)
    }
}

/// What an HTTP answer means: the statuses every service shares (2xx, 429 with Retry-After, 5xx) and the meanings of
/// the service's own codes (`service.codes`: already running, one at a time, not registered).
public enum HTTPOutcome {
    /// `service`: whose codes the answer may carry (nil: none known). `wallNow`: seconds since 1970, against which a
    /// lock's expiry is read. `secrets`: the backend's own (its token), masked in the service's words, which go into
    /// logs, metrics and the unauthenticated `/healthz` (a service may quote the token it refused).
    public static func classify(_ result: Result<HTTPResponse, HTTPTransportError>, kind: PushKind, service: BackendDefinition? = nil,
                                secrets: [String] = [], wallNow: Double = Date().timeIntervalSince1970) -> DeliveryReport {
        switch result {
        case .failure(let error):
            return DeliveryReport(.retry(after: nil), code: error.isTimeout ? .timeout : .transport(Int32(error.code), why: error.message))
        case .success(let response):
            var report = classify(response, kind: kind, service: service, secrets: secrets, wallNow: wallNow)
            report.connectionsOpened = response.connectionsOpened
            return report
        }
    }

    /// How long until a lock's `expiresAt` (ISO 8601 text, or seconds or milliseconds since 1970; the documents
    /// give no format): at least a second, at most a day; nil for what is not a time.
    static func lockExpiry(_ value: JSONValue, now: Double) -> Duration? {
        let epoch: Double?
        switch value {
        case .string(let text): epoch = Timestamp.epoch(fromISO8601: OutsideText.bounded(text, limit: 64)) ?? Double(text)
        case .int, .double: epoch = value.doubleValue
        default: epoch = nil
        }
        guard var seconds = epoch, seconds.isFinite else { return nil }
        if seconds > 100_000_000_000 { seconds /= 1000 }  // milliseconds
        let wait = min(max(seconds - now, 1), 86_400)
        return .milliseconds(Int64((wait * 1000).rounded()))
    }

    private static func classify(_ response: HTTPResponse, kind: PushKind, service: BackendDefinition?, secrets: [String],
                                 wallNow: Double) -> DeliveryReport {
        // Delivered: a 2xx says all there is (its body is not read; reading it was ~1 % of a push's CPU).
        if (200..<300).contains(response.status) { return DeliveryReport(.delivered, status: response.status) }
        // A service's error body says `error` (Aivi, Island Pulse) or `code` (RFC 9457 problems, PushWard).
        let problem = try? JSONParser.parse(response.body)
        // The service's words: secrets masked, then cut short (a cut could leave part of one), they go into logs,
        // metrics and /healthz.
        let code = (problem?["error"]?.stringValue ?? problem?["code"]?.stringValue)
            .map { DeliveryCode(service: OutsideText.bounded(SecretMasking.masking(secrets, in: $0), limit: DeliveryReport.codeLimit), of: service) }
        if let code, case .known(let known) = code, known.status == nil || known.status == response.status {
            switch known.meaning {
            case .alreadyRunning where kind == .start:
                return DeliveryReport(.alreadyRunning, status: response.status, code: code)
            case .oneAtATime:
                // When the service says the lock lifts; past that the start is tried again.
                let expiry = service?.lockExpiryField.flatMap { problem?[$0] }.flatMap { lockExpiry($0, now: wallNow) }
                return DeliveryReport(.locked(for: expiry), status: response.status, code: code)
            case .notRegistered:
                return DeliveryReport(.rejected(code), status: response.status, code: code)
            default: break
            }
        }
        switch response.status {
        case 429:
            let after = response.headers["retry-after"].flatMap(RetryPolicy.retryAfter)
            return DeliveryReport(.retry(after: after), status: 429, code: code)
        case 500..<600:
            return DeliveryReport(.retry(after: nil), status: response.status, code: code)
        default:
            return DeliveryReport(.rejected(code ?? .service("HTTP \(response.status)")), status: response.status, code: code)
        }
    }
}

/// A service spoken to over HTTP (Aivi, Island Pulse; PushWard and ActivitySmith build on it): the request's method and path at a
/// base URL, with the token in Authorization.
/// A backend that speaks HTTP: the exact exchanges one push makes, in order, for `send --dry-run` and `render`
/// (a PushWard start is a create then a PATCH; a two-phase end's second request goes `dismissal.after` later).
public protocol HTTPExchanges {
    func wire(_ request: BackendRequest, kind: PushKind) -> [HTTPRequest]
}

extension HTTPPushBackend: HTTPExchanges {
    public func wire(_ request: BackendRequest, kind: PushKind) -> [HTTPRequest] { [httpRequest(for: request)] }
}

public struct HTTPPushBackend: PushBackend {
    public let name: String
    /// The service it speaks to: its codes and its authorization scheme.
    public let service: BackendDefinition
    public let baseURL: String
    /// How the token is carried (`Authorization: <scheme> <token>`), the service's.
    public var scheme: String { service.authScheme }
    let token: String
    public let allowsOneActiveJob: Bool
    public var sendsAtOnce: Int? { HTTPClient.transfersAtOncePerHost }
    /// Where its requests go out (paced, when the service documents an allowance).
    let sender: HTTPSender

    public init(name: String, service: BackendDefinition, baseURL: String, token: String, allowsOneActiveJob: Bool = false, client: HTTPClient) {
        self.init(name: name, service: service, baseURL: baseURL, token: token, allowsOneActiveJob: allowsOneActiveJob, sender: HTTPSender(client: client))
    }

    public init(name: String, service: BackendDefinition, baseURL: String, token: String, allowsOneActiveJob: Bool, sender: HTTPSender) {
        self.sender = sender
        self.name = name
        self.service = service
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.allowsOneActiveJob = allowsOneActiveJob
    }

    public func httpRequest(for request: BackendRequest) -> HTTPRequest {
        HTTPRequest(method: request.method, url: baseURL + request.target,
                    headers: [("Authorization", "\(scheme) \(token)"), ("Content-Type", "application/json")], body: request.bodyBytes)
    }

    nonisolated(nonsending) public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        if let refused = DeliveryReport.invalidTarget(request) { return refused }
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await sender.send(httpRequest(for: request))) } catch { result = .failure(error) }
        return HTTPOutcome.classify(result, kind: kind, service: service, secrets: [token])
    }
}
