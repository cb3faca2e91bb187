public import HTTPClient
import JSON
public import LiveActivity

/// ActivitySmith (activitysmith.com): streams by key at `{base}/live-activity/stream/{key}`, the API key as a Bearer
/// token — an `HTTPPushBackend` with two additions. Its limit of 60 requests a minute is kept by the sender the factory
/// gives it (`HTTPSender`, the pacer shared by every lane and every backend of the account), so a burst is spread
/// rather than refused; a 429 that still comes is retried
/// after its Retry-After. A stream the user paused answers 200 with `operation: paused`: delivered, nothing shown,
/// reported with the code `paused`.
public struct ActivitySmithBackend: PushBackend, HTTPExchanges {
    public func wire(_ request: BackendRequest, kind: PushKind) -> [HTTPRequest] { [http.httpRequest(for: request)] }

    let http: HTTPPushBackend
    public var name: String { http.name }
    public let allowsOneActiveJob = false
    public var sendsAtOnce: Int? { HTTPClient.transfersAtOncePerHost }

    /// `sender`: its requests' way out, paced as the factory made it.
    public init(name: String, baseURL: String, token: String, sender: HTTPSender) {
        http = HTTPPushBackend(name: name, service: ActivitySmithSchema.definition, baseURL: baseURL, token: token, allowsOneActiveJob: false,
                               sender: sender)
    }

    /// Paced to its documented allowance (or `window`), with the pacer `pacers` shares between backends of one account.
    public init(name: String, baseURL: String, token: String, client: HTTPClient, window: RequestWindow? = nil, pacers: PacerRegistry? = nil) {
        self.init(name: name, baseURL: baseURL, token: token,
                  sender: .paced(for: ActivitySmithSchema.definition, baseURL: baseURL, token: token, client: client, pacers: pacers, window: window))
    }

    nonisolated(nonsending) public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        if let refused = DeliveryReport.invalidTarget(request) { return refused }
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await http.sender.send(http.httpRequest(for: request))) } catch { result = .failure(error) }
        var report = HTTPOutcome.classify(result, kind: kind, service: ActivitySmithSchema.definition, secrets: [http.token])
        // Its fifth Live Activity at once: 429 {"error": "Live Activity limit reached", "limit": 4, "active": 4}. Not a
        // rate: retrying soon cannot help, so the start waits like a locked job — until one of ours ends, or long.
        if case .success(let response) = result, response.status == 429,
           (try? JSONParser.parse(response.body))?["error"]?.stringValue == "Live Activity limit reached" {
            return DeliveryReport(.locked(for: nil), status: 429, code: .known(.tooManyActivities, of: ActivitySmithSchema.definition))
        }
        if case .success(let response) = result, report.outcome == .delivered,
           (try? JSONParser.parse(response.body))?["operation"] == "paused" {
            let opened = report.connectionsOpened
            report = DeliveryReport(.delivered, status: response.status, code: .known(.paused, of: ActivitySmithSchema.definition))
            report.connectionsOpened = opened
        }
        return report
    }
}

extension ActivitySmithSchema: TransportService {
    public static func transport(_ parts: TransportParts) -> any PushBackend {
        ActivitySmithBackend(name: parts.name, baseURL: parts.baseURL, token: parts.token, sender: parts.sender(for: definition))
    }
}
