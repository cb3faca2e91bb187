import HTTPClient
import JSON
import LiveActivity

/// ActivitySmith (activitysmith.com): streams by key at `{base}/live-activity/stream/{key}`, the API key as a Bearer
/// token. Its limit of 60 requests a minute is kept here (`RequestWindow`, shared by every lane of the backend), so a
/// burst is spread rather than refused; a 429 that still comes is retried after its Retry-After. A stream the user
/// paused answers 200 with `operation: paused`: delivered, nothing shown, reported with the code `paused`.
public struct ActivitySmithBackend: PushBackend {
    public static let requestsPerMinute = 60

    public let name: String
    public let baseURL: String
    public let allowsOneActiveJob = false
    let token: String
    let client: HTTPClient
    private let pacer: RequestPacer

    public init(name: String, baseURL: String, token: String, client: HTTPClient,
                window: RequestWindow = RequestWindow(limit: ActivitySmithBackend.requestsPerMinute, seconds: 60)) {
        self.name = name
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.client = client
        self.pacer = RequestPacer(window)
    }

    public func httpRequest(for request: BackendRequest) -> HTTPRequest {
        HTTPRequest(method: request.method, url: baseURL + request.target,
                    headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: request.bodyBytes)
    }

    public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        await pacer.turn()
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await client.send(httpRequest(for: request))) } catch { result = .failure(error) }
        let report = HTTPOutcome.classify(result, kind: kind)
        if case .success(let response) = result, report.outcome == .delivered,
           (try? JSONParser.parse(response.body))?["operation"] == "paused" {
            var paused = DeliveryReport(.delivered, status: response.status, code: "paused")
            paused.connectionsOpened = report.connectionsOpened
            return paused
        }
        return report
    }
}
