import HTTPClient
import JSON
import LiveActivity

/// PushWard (pushward.app): activities by slug at `{base}/activities`, the integration key as a Bearer token. A start
/// first creates the activity (`POST /activities`, an upsert that answers 201 for a new or existing slug), then sends
/// its content (`PATCH /activities/{slug}`, state `ongoing`); updates and ends are that PATCH alone (`ended` ends it).
/// Its errors are RFC 9457 problems with a `code`: 401 (the key, for good), 403 (its policy), 409 (25 activities per
/// user: `activity.limit_exceeded`), 429 (200 requests a minute per address, with Retry-After), 5xx. The 200 a minute
/// are also kept on our side (`RequestWindow`, shared by the backend's lanes), so a burst is spread, not refused.
public struct PushWardBackend: PushBackend {
    public static let requestsPerMinute = 200

    public let name: String
    public let baseURL: String
    let token: String
    let client: HTTPClient
    public let allowsOneActiveJob = false
    private let pacer: RequestPacer

    public init(name: String, baseURL: String, token: String, client: HTTPClient,
                window: RequestWindow = RequestWindow(limit: PushWardBackend.requestsPerMinute, seconds: 60)) {
        self.name = name
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.client = client
        self.pacer = RequestPacer(window)
    }

    private var headers: [(String, String)] { [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")] }

    public func httpRequest(for request: BackendRequest) -> HTTPRequest {
        HTTPRequest(method: request.method, url: baseURL + request.target, headers: headers, body: request.bodyBytes)
    }

    public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        if let refused = DeliveryReport.invalidTarget(request) { return refused }
        if kind == .start, let creation = request.creation {
            let created = await create(creation, kind: kind)
            guard created.outcome == .delivered else { return created }
        }
        let report = await send(httpRequest(for: request), kind: kind)
        // An update or end for an activity PushWard does not have (a crash between a start's two requests, or its
        // time to live ran out): create it (an upsert) and send the content once more, rather than lose the push.
        guard kind != .start, report.status == 404, report.code == "activity.not_found", let creation = request.creation else { return report }
        let created = await create(creation, kind: kind)
        guard created.outcome == .delivered else { return created }
        return await send(httpRequest(for: request), kind: kind)
    }

    private func create(_ creation: JSONValue, kind: PushKind) async -> DeliveryReport {
        await send(HTTPRequest(method: "POST", url: baseURL + "/activities", headers: headers, body: creation.jsonBytes), kind: kind)
    }

    private func send(_ http: HTTPRequest, kind: PushKind) async -> DeliveryReport {
        await pacer.turn()
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await client.send(http)) } catch { result = .failure(error) }
        return HTTPOutcome.classify(result, kind: kind)
    }
}
