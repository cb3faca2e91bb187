import Dispatch
import Platform
import FoundationEssentials
public import JSON
import LiveActivity
import Synchronization
public import WebSocketTransport

/// The push services as documented, on 127.0.0.1 over real HTTP: for tests and the local preview. Each service's
/// fake is its type's `FakedService` conformance (FakeAivi, FakeIslandPulse, FakePushWard, FakeActivitySmith).
///
/// Records every request; follows each contract; and answers with any status, delay or error body on demand.
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
        /// Each fake's own state, by its type (`State.pushWard`…, through `subscript(FakeState.Type)`).
        var services: [ObjectIdentifier: any Sendable] = [:]
        var waiters: [(predicate: @Sendable ([Recorded]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        /// The latest payload per activity (`kind/id`: `aivi/slug`), for the preview page.
        var shown: [String: JSONValue] = [:]
        /// When each was shown last, counted (times can tie): the one shown longest ago goes first.
        var shownTurns: [String: Int] = [:]
        var shownTurn = 0
        var log: [JSONValue] = []
        var down = false
        var refusedWhileDown = 0
    }

    /// The accounts it takes, by service and key, with their plans: every fake's test accounts, then those given.
    let accounts: [BackendKind: [String: FakeAccount.Plan]]
    private let loop: WebSocketEventLoop
    let state = Locked(State())

    public var baseURL: String { "http://127.0.0.1:\(loop.listenPort)" }

    /// The preview server takes any token: it stands in for services the user has not signed up to yet.
    public let acceptsAnyToken: Bool

    /// Pages served for a GET besides `/api/requests` (the preview server's page and drawings; nil: none).
    public typealias Pages = @Sendable (_ path: String, _ service: FakePushService) -> HTTPServerResponse?
    private let pages: Pages?

    /// `accounts`: besides (or replacing the plan of) each fake's test accounts (`aivi-test-token`, `pulse-test-id`…).
    public init(accounts: [FakeAccount] = [], port: Int = 0, acceptsAnyToken: Bool = false, host: String = "127.0.0.1", pages: Pages? = nil) throws {
        self.pages = pages
        self.acceptsAnyToken = acceptsAnyToken
        var known: [BackendKind: [String: FakeAccount.Plan]] = [:]
        for fake in Self.fakes { for key in fake.testAccounts { known[fake.definition.kind, default: [:]][key] = .standard } }
        for account in accounts { known[account.kind, default: [:]][account.key] = account.plan }
        self.accounts = known
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

    /// Waits until the recorded requests satisfy `predicate`; false after `timeout`. 30 s by default: a daemon started
    /// under ThreadSanitizer beside the other suites took over 10 s to its first push in CI.
    public func wait(timeout: Duration = .seconds(30), until predicate: @escaping @Sendable ([Recorded]) -> Bool) async -> Bool {
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

    /// How many activities the preview page keeps: more than any phone shows at once.
    static let shownLimit = 100

    /// Keeps a delivered body for the preview page, if the daemon's schemas accept it (nothing else is drawn).
    func show(_ key: String, _ body: JSONValue, ended: Bool) {
        let kind = key.split(separator: "/").first.flatMap { BackendKind(rawValue: String($0)) }
        guard let fake = kind.flatMap({ $0.service as? any FakedService.Type }), fake.problems(body).isEmpty else { return }
        let time = Date().timeIntervalSince1970
        state.withLock { s in
            s.shown[key] = ["payload": body, "ended": .bool(ended), "at": .double(time)]
            // The page draws every one on each look: past `shownLimit`, the one shown longest ago goes (a client
            // inventing slugs made each look take seconds, then the page nothing at all).
            s.shownTurn += 1
            s.shownTurns[key] = s.shownTurn
            if s.shown.count > Self.shownLimit, let oldest = s.shownTurns.min(by: { $0.value < $1.value })?.key {
                s.shown[oldest] = nil
                s.shownTurns[oldest] = nil
            }
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

    /// The answer of the fake whose requests these are, by its contract.
    private func contract(_ request: HTTPServerRequest, _ body: JSONValue?) -> HTTPServerResponse {
        guard let fake = Self.fake(method: request.method, path: request.path) else { return error(404, "NOT_FOUND", "no such endpoint") }
        return fake.answer(request, body, in: self)
    }

    /// The plan of an account at a service; nil: the service does not know the key (the preview server takes any).
    func plan(_ key: String, at kind: BackendKind) -> FakeAccount.Plan? {
        accounts[kind]?[key] ?? (acceptsAnyToken ? .standard : nil)
    }
}

extension HTTPServerResponse {
    func also(_ body: (HTTPServerResponse) -> Void) -> HTTPServerResponse {
        body(self)
        return self
    }
}
