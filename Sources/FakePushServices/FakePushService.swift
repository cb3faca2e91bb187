import Dispatch
import Platform
import FoundationEssentials
public import JSON
import LiveActivity
import Synchronization
public import WebSocketTransport

/// Aivi, Island Pulse, PushWard and ActivitySmith as documented, on 127.0.0.1 over real HTTP: for tests and the local preview.
///
/// Records every request; follows each contract (auth, job ids, 409 on a running job's start, the free tier's
/// single job); and answers with any status, delay or error body on demand.
public final class FakePushService: Sendable {
    public struct Recorded: Sendable, Equatable {
        public let method: String
        public let path: String
        public let authorization: String?
        public let userAgent: String?
        public let body: JSONValue?
        /// When the request arrived, seconds since 1970.
        public var at: Double = 0
    }

    /// A forced answer for the next request(s).
    public struct Scripted: Sendable {
        public var status: Int
        public var body: String
        public var headers: [String: String]
        public var delay: Duration
        public init(status: Int, body: String = "{}", headers: [String: String] = [:], delay: Duration = .zero) {
            self.status = status
            self.body = body
            self.headers = headers
            self.delay = delay
        }
    }

    struct State {
        var requests: [Recorded] = []
        var scripted: [Scripted] = []
        var runningJobs: [String: Set<String>] = [:]  // token → job ids
        var jobStarts: [String: Double] = [:]  // token + "/" + job → when it started (seconds since 1970)
        /// PushWard's activities per integration key, by slug.
        var pushWard: [String: [String: PushWardActivity]] = [:]
        var pushWardMonthlyQuota: Int?
        var pushWardUpdates = 0
        /// When each PushWard request of the last minute came (all from 127.0.0.1: one client address).
        var pushWardRequests: [Double] = []
        /// Seconds PushWard's clock is ahead of the real one (tests move time for its server-side ends).
        var pushWardClockAhead: Double = 0
        /// ActivitySmith's streams per API key, by stream key.
        var activitySmith: [String: [String: ActivitySmithStream]] = [:]
        var activitySmithRequests: [String: [Double]] = [:]
        var waiters: [(predicate: @Sendable ([Recorded]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        /// The latest payload per activity (`aivi/slug`, `islandpulse/job`), for the preview page.
        var shown: [String: JSONValue] = [:]
        var log: [JSONValue] = []
        var down = false
        var refusedWhileDown = 0
    }

    public let aiviToken: String
    public let islandPulseIDs: Set<String>
    /// PushWard integration keys it takes.
    public let pushWardKeys: Set<String>
    /// PushWard keys with the `activity:update` scope only: they may PATCH existing activities, not create.
    public let pushWardUpdateOnlyKeys: Set<String>
    /// ActivitySmith API keys it takes.
    public let activitySmithKeys: Set<String>
    /// Island Pulse tokens on the free tier.
    public let freeTier: Set<String>
    /// Island Pulse IDs the app has not registered yet: 404 DEVICE_NOT_REGISTERED.
    public let unregisteredIslandPulseIDs: Set<String>
    private let loop: WebSocketEventLoop
    let state = Locked(State())

    public var baseURL: String { "http://127.0.0.1:\(loop.listenPort)" }

    /// The preview server takes any token: it stands in for services the user has not signed up to yet.
    public let acceptsAnyToken: Bool

    /// Pages served for a GET besides `/api/requests` (the preview server's page and drawings; nil: none).
    public typealias Pages = @Sendable (_ path: String, _ service: FakePushService) -> HTTPServerResponse?
    private let pages: Pages?

    public init(aiviToken: String = "aivi-test-token", islandPulseIDs: Set<String> = ["pulse-test-id"], freeTier: Set<String> = [],
                pushWardKeys: Set<String> = ["pushward-test-key"], activitySmithKeys: Set<String> = ["activitysmith-test-key"], port: Int = 0,
                acceptsAnyToken: Bool = false, host: String = "127.0.0.1", unregisteredIslandPulseIDs: Set<String> = [],
                pushWardUpdateOnlyKeys: Set<String> = [], pages: Pages? = nil) throws {
        self.pages = pages
        self.pushWardUpdateOnlyKeys = pushWardUpdateOnlyKeys
        self.acceptsAnyToken = acceptsAnyToken
        self.unregisteredIslandPulseIDs = unregisteredIslandPulseIDs
        self.pushWardKeys = pushWardKeys
        self.activitySmithKeys = activitySmithKeys
        self.aiviToken = aiviToken
        self.islandPulseIDs = islandPulseIDs
        self.freeTier = freeTier
        var options = WebSocketEventLoop.Options()
        options.listen = (host, port)
        options.name = "fake-push"
        loop = try WebSocketEventLoop(options: options)
        loop.onHTTPRequest = { [weak self] request, respond in
            guard let self else { return respond(HTTPServerResponse(status: 503)) }
            self.handle(request, respond)
        }
        loop.start()
    }

    /// The last reference can go inside a request's handler, on the loop's own thread (a test ending while an answer
    /// is written): the loop is then stopped from another thread, as it cannot wait for itself.
    deinit {
        if loop.isInEventLoop {
            let loop = self.loop
            DispatchQueue.global().async { loop.shutdown() }
        } else {
            loop.shutdown()
        }
    }

    public func stop() { loop.shutdown() }

    public var requests: [Recorded] { state.withLock { $0.requests } }

    /// Answers the next requests with these, in order, before the contract applies again.
    public func script(_ answers: [Scripted]) { state.withLock { $0.scripted += answers } }

    /// While down, every push is answered `503 SERVICE_UNAVAILABLE` and not recorded: the service is out.
    public func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    /// Pushes refused while down.
    public var refusedWhileDown: Int { state.withLock { $0.refusedWhileDown } }

    /// Waits until the recorded requests satisfy `predicate`; false after `timeout`.
    public func wait(timeout: Duration = .seconds(10), until predicate: @escaping @Sendable ([Recorded]) -> Bool) async -> Bool {
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.releaseWaiters()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if predicate(s.requests) { return true }
                s.waiters.append((predicate, continuation))
                return false
            }
            if now { continuation.resume() }
        }
        return predicate(requests)
    }

    private func releaseWaiters() {
        let all = state.withLock { s in defer { s.waiters = [] }; return s.waiters.map(\.continuation) }
        for continuation in all { continuation.resume() }
    }

    /// Notes a line for the preview page's log (the demo adds the dispatcher's budget decisions here).
    public func note(_ entry: JSONValue) {
        state.withLock { s in
            s.log.append(entry)
            if s.log.count > 200 { s.log.removeFirst(s.log.count - 200) }
        }
    }

    /// Every push received, oldest first (method, path, body, time): what an end-to-end test compares.
    public var recordedJSON: JSONValue {
        .object(["requests": .array(requests.map { request in
            .object(["method": .string(request.method), "path": .string(request.path), "body": request.body ?? .null, "at": .double(request.at)])
        })])
    }

    /// What each activity shows now (`aivi/slug` → `{payload, ended, at}`, only bodies LiveBridge's schemas accept) and
    /// the log of what was shown, newest last: what the preview page draws.
    public var shown: (activities: [String: JSONValue], log: [JSONValue]) { state.withLock { ($0.shown, $0.log) } }

    private func handle(_ request: HTTPServerRequest, _ respond: @escaping @Sendable (HTTPServerResponse) -> Void) {
        if request.method == "GET" {
            if request.path == "/api/requests" { return respond(HTTPServerResponse(status: 200, json: recordedJSON.jsonText)) }
            return respond(pages?(request.path, self) ?? error(404, "NOT_FOUND", "no such page"))
        }
        let refused = state.withLock { s -> Bool in
            if s.down { s.refusedWhileDown += 1 }
            return s.down
        }
        if refused { return respond(error(503, "SERVICE_UNAVAILABLE", "the service is down")) }
        let body = try? JSONParser.parse(request.body)
        // The preview server answers as LiveBridge's own checks would: what they refuse is not drawn.
        if acceptsAnyToken, let problems = PreviewContent.problems(method: request.method, path: request.path, body: body), !problems.isEmpty {
            return respond(error(400, "INVALID_CONTENT", problems.map(\.description).joined(separator: "; ")))
        }
        var record = Recorded(method: request.method, path: request.path, authorization: request.headers["authorization"],
                              userAgent: request.headers["user-agent"], body: body)
        record.at = Date().timeIntervalSince1970
        let (scripted, ready) = state.withLock { s -> (Scripted?, [CheckedContinuation<Void, Never>]) in
            s.requests.append(record)
            // A demo left running for days keeps the newest pushes only.
            if s.requests.count > 10_000 { s.requests.removeFirst(s.requests.count - 10_000) }
            let requests = s.requests
            var ready: [CheckedContinuation<Void, Never>] = []
            s.waiters.removeAll { waiter in
                guard waiter.predicate(requests) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return (s.scripted.isEmpty ? nil : s.scripted.removeFirst(), ready)
        }
        defer { for continuation in ready { continuation.resume() } }
        if let scripted {
            let response = HTTPServerResponse(status: scripted.status, json: scripted.body, headers: scripted.headers)
            if scripted.delay == .zero { respond(response) } else {
                Task { try? await Task.sleep(for: scripted.delay); respond(response) }
            }
            return
        }
        respond(contract(request, body))
    }

    /// Keeps a delivered body for the preview page, if the daemon's schemas accept it (nothing else is drawn).
    func show(_ key: String, _ body: JSONValue, ended: Bool) {
        let service = key.split(separator: "/").first.flatMap { BackendKind(rawValue: String($0)) }
        guard let service, PreviewContent.problems(body, service: service).isEmpty else { return }
        let time = Date().timeIntervalSince1970
        state.withLock { s in
            s.shown[key] = ["payload": body, "ended": .bool(ended), "at": .double(time)]
            s.log.append(["at": .double(time), "activity": .string(key), "decision": "sent", "ended": .bool(ended)])
            if s.log.count > 200 { s.log.removeFirst(s.log.count - 200) }
        }
    }

    /// The key a request carries as `Authorization: Bearer KEY` ("" without one).
    func bearerKey(_ request: HTTPServerRequest) -> String {
        let header = request.headers["authorization"] ?? ""
        return header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
    }

    func error(_ status: Int, _ code: String, _ message: String) -> HTTPServerResponse {
        HTTPServerResponse(status: status, json: JSONValue.object(["error": .string(code), "message": .string(message)]).jsonText)
    }

    private func contract(_ request: HTTPServerRequest, _ body: JSONValue?) -> HTTPServerResponse {
        if request.path == "/activities" || request.path.hasPrefix("/activities/") { return pushWardContract(request, body) }
        if request.path.hasPrefix("/live-activity/stream/") { return activitySmithContract(request, body) }
        if request.method == "PATCH", request.path.hasPrefix("/activity/") {
            guard acceptsAnyToken || request.headers["authorization"] == "Token \(aiviToken)" else { return error(401, "UNAUTHORIZED", "Invalid token") }
            guard let body, let state = body["state"]?.stringValue, ["ONGOING", "IDLE"].contains(state), body["content"]?.objectValue != nil
            else { return error(400, "INVALID_BODY", "state and content are required") }
            show("aivi/" + request.path.dropFirst("/activity/".count), body, ended: state == "IDLE")
            return HTTPServerResponse(status: 200, json: body.jsonText)
        }
        if request.method == "POST", request.path == "/notify" {
            let header = request.headers["authorization"] ?? ""
            guard header.hasPrefix("Bearer "), acceptsAnyToken || islandPulseIDs.contains(String(header.dropFirst(7)))
                || unregisteredIslandPulseIDs.contains(String(header.dropFirst(7))) else {
                return error(400, "MISSING_UNIQUE_ID", "Missing or invalid Bearer token")
            }
            let token = String(header.dropFirst(7))
            guard !unregisteredIslandPulseIDs.contains(token) else {
                return error(404, "DEVICE_NOT_REGISTERED", "No device registered for this unique ID")
            }
            guard let job = body?["job_id"]?.stringValue, !job.isEmpty else { return error(400, "MISSING_JOB_ID", "job_id missing") }
            guard job.count <= 64, job.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                return error(400, "INVALID_JOB_ID", "job_id format invalid")
            }
            let action = body?["action"]?.stringValue ?? "update"
            guard ["start", "update", "end"].contains(action) else { return error(400, "INVALID_ACTION", "action must be start, update or end") }
            return state.withLock { s -> HTTPServerResponse in
                var running = s.runningJobs[token] ?? []
                defer { s.runningJobs[token] = running }
                switch action {
                case "end":
                    running.remove(job)
                    s.jobStarts[token + "/" + job] = nil
                default:
                    if action == "start", running.contains(job) {
                        return error(409, "ACTIVITY_ALREADY_RUNNING", "A Live Activity for this job_id is already running")
                    }
                    if freeTier.contains(token), !running.contains(job), let other = running.first {
                        // The reference names `expiresAt` but not its form or value: taken here as ISO 8601, the
                        // locked job's start plus a Live Activity's 8 hours.
                        let expires = (s.jobStarts[token + "/" + other] ?? Date().timeIntervalSince1970) + 8 * 3600
                        return HTTPServerResponse(status: 403, json: JSONValue.object([
                            "error": "FREE_TIER_JOB_LOCKED", "message": .string("Free tier: \(other) is already active"),
                            "expiresAt": .string(Timestamp.iso8601(expires)),
                        ]).jsonText)
                    }
                    if running.insert(job).inserted { s.jobStarts[token + "/" + job] = Date().timeIntervalSince1970 }
                }
                return HTTPServerResponse(status: 200, json: #"{"ok":true}"#)
            }.also { response in
                if response.status == 200, let body { show("islandpulse/" + job, body, ended: action == "end") }
            }
        }
        return error(404, "NOT_FOUND", "no such endpoint")
    }
}

extension HTTPServerResponse {
    func also(_ body: (HTTPServerResponse) -> Void) -> HTTPServerResponse {
        body(self)
        return self
    }
}
