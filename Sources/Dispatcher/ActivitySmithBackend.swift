public import HTTPClient
import JSON
public import LiveActivity

/// ActivitySmith (activitysmith.com): streams by key at `{base}/live-activity/stream/{key}`, the API key as a Bearer
/// token — an `HTTPPushBackend` with two additions. Its limit of 60 requests a minute is kept by the client it sends
/// through (`PacedClient`, the pacer shared by every lane and every backend of the account), so a burst is spread
/// rather than refused; a 429 that still comes is retried
/// after its Retry-After. A stream the user paused answers 200 with `operation: paused`: delivered, nothing shown,
/// reported with the code `paused`.
public struct ActivitySmithBackend: PushBackend, HTTPExchanges {
    public func wire(_ request: BackendRequest, kind: PushKind) -> [HTTPRequest] { [http.httpRequest(for: request)] }

    let http: HTTPPushBackend
    private let paced: PacedClient
    public var name: String { http.name }
    public let allowsOneActiveJob = false

    /// `pacers`: shared with the other backends of one account (its 60 a minute are per API key, not per backend).
    public init(name: String, baseURL: String, token: String, client: HTTPClient,
                window: RequestWindow = RequestWindow(documentedFor: .activitysmith), pacers: PacerRegistry? = nil) {
        http = HTTPPushBackend(name: name, service: ActivitySmithSchema.definition, baseURL: baseURL, token: token, client: client)
        // One account, however its address is written (a trailing slash, letter case).
        let account = (baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL).lowercased()
        paced = PacedClient(client: client, pacer: pacers?.pacer("activitysmith \(account) \(token)", window) ?? RequestPacer(window))
    }

    public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        if let refused = DeliveryReport.invalidTarget(request) { return refused }
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await paced.send(http.httpRequest(for: request))) } catch { result = .failure(error) }
        var report = HTTPOutcome.classify(result, kind: kind, service: ActivitySmithSchema.definition)
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
        ActivitySmithBackend(name: parts.name, baseURL: parts.baseURL, token: parts.token, client: parts.client, pacers: parts.pacers)
    }
}
