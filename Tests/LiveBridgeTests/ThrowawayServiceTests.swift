@testable import Dispatcher
import FoundationEssentials
import HTTPClient
import HomeAssistant
import JSON
import LiveActivity
import Platform
@testable import LiveBridge
@testable import Rules
import Templates
import Testing
import WebSocketTransport

/// A service added in one place: its type (definition, and rendering as a conformance) registered here, in this file alone, and the
/// rest of LiveBridge — the rules loader, the renderer, the factory and the HTTP transport — takes it as it takes
/// the five it ships with. (The proof the issue asked for: nothing outside this file names the service.)
struct ThrowawayServiceTests {
    static let kind = BackendKind(named: "echo")

    /// Echo: `POST /echo/{slug}` with the note's fields as the body, one template `note` with a `text`.
    struct EchoRendering: BackendRendering {
        func schema(template: String) -> ObjectSchema? {
            template == "note" ? ObjectSchema([required("text", .text(maxLength: 64))]) : nil
        }

        func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                     context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
            var body = fields
            body["phase"] = .string(phase.rawValue)
            return .success(BackendRequest(backend: target.backend.name, kind: ThrowawayServiceTests.kind, method: "POST",
                                           target: "/echo/\(target.id)", body: .object(body)))
        }

        func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
            BackendRequest(backend: target.backend.name, kind: ThrowawayServiceTests.kind, method: "POST", target: "/echo/\(target.id)",
                           body: ["phase": "end"])
        }

        func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest {
            fallbackEnd(rule, target, last: start, now: now)
        }

        func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
            -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
            .success([(backend.name, BackendRequest(backend: backend.name, kind: ThrowawayServiceTests.kind, method: "POST",
                                                    target: "/echo/\(activity)", body: .object(payload)))])
        }
    }

    /// The service as one type: its definition, and its rendering as the type's conformance.
    enum Echo: PushService, RenderedService {
        static let definition = BackendDefinition(
            kind: kind, name: "Echo", idKey: "slug", idProblem: { $0.isEmpty || $0.contains("/") ? "not an echo slug" : nil },
            methods: ["POST"], idPath: "/echo/", otherTarget: nil, configKeys: ["type", "token", "base_url"], needsToken: true,
            templates: ["note"], defaultDismissAfter: .seconds(60), defaultSettle: .zero, requestsPerMinute: nil, baseURL: nil,
            spendsRelay: false, contentShare: .body)
        static let rendering: any BackendRendering = EchoRendering()
    }

    /// Defined, with no rendering: rules naming it are refused.
    enum Half: PushService {
        static let definition = BackendDefinition(
            kind: BackendKind(named: "half"), name: "Half", idKey: "slug", idProblem: { _ in nil }, methods: ["POST"], idPath: "/half/",
            otherTarget: nil, configKeys: ["type", "token"], needsToken: true, templates: ["note"], defaultDismissAfter: .seconds(60),
            defaultSettle: .zero, requestsPerMinute: nil, baseURL: "http://127.0.0.1:1", spendsRelay: false, contentShare: .body)
    }

    @Test func aServiceRegisteredInOnePlaceIsLoadedRenderedAndSent() async throws {
        // The one registration line (for this test's task only: other tests running meanwhile never see Echo).
        try await BackendDefinition.with(services: [Echo.self]) { try await loadRenderAndSend() }
        #expect(BackendKind(rawValue: "echo") == nil, "gone once the test's task is done")
    }

    func loadRenderAndSend() async throws {
        let received = Locked<[HTTPServerRequest]>([])
        var options = WebSocketEventLoop.Options()
        options.listen = ("127.0.0.1", 0)
        let server = try WebSocketEventLoop(options: options)
        server.onHTTPRequest = { request, respond in
            received.withLock { $0.append(request) }
            respond(HTTPServerResponse(status: 200, json: "{}"))
        }
        server.start()
        defer { server.shutdown() }

        let text = """
            homeassistant: {url: "ws://127.0.0.1:1/api/websocket", token: t}
            backends:
              shout: {type: echo, token: echo-key, base_url: "http://127.0.0.1:\(server.listenPort)"}
            activities:
              washer:
                backend: shout
                template: note
                active_when: "{{ is_state('sensor.washer', 'on') }}"
                text: "{{ states('sensor.washer_program') }}"
            """
        let rules = try RulesLoader.load(text: text, file: "echo.yaml").get()
        let rule = try #require(rules.activities.first)
        #expect(rule.targets.map(\.kind) == [Self.kind])

        // The loader knows its keys and templates: a misspelt template is refused with its list.
        guard case .failure(let errors) = RulesLoader.load(text: text.replacingAll("template: note", with: "template: nope"), file: "echo.yaml") else {
            Issue.record("an unknown template was taken")
            return
        }
        #expect(errors.description.contains("it takes: note"))

        let context = EvaluationContext(states: [
            "sensor.washer": EntityState(entityID: "sensor.washer", state: "on", lastChanged: 0),
            "sensor.washer_program": EntityState(entityID: "sensor.washer_program", state: "Cotton 40", lastChanged: 0),
        ], now: 1_800_000_000)
        #expect(try ActivityRenderer.isActive(rule, in: context).get())
        var notes: [PayloadIssue] = []
        let request = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(request.target == "/echo/washer" && request.body == ["text": "Cotton 40", "phase": "start"])

        // The factory has no transport of its own for it: plain HTTP with the token as a Bearer.
        let backend = BackendFactory.make(try #require(rules.backends["shout"]), client: HTTPClient(), connection: nil)
        #expect((backend as? HTTPPushBackend)?.sender.pacer == nil, "Echo documents no allowance")
        let report = await backend.deliver(request, kind: .start)
        #expect(report.outcome == .delivered)
        let sent = try #require(received.withLock { $0.first })
        #expect(sent.method == "POST" && sent.path == "/echo/washer")
        #expect(sent.headers["authorization"] == "Bearer echo-key")
        #expect(try JSONParser.parse(sent.body) == ["text": "Cotton 40", "phase": "start"])
    }

    /// Defined, its rendering not registered yet: rules naming it are refused at load, others load as ever.
    @Test func aServiceWithoutItsRenderingIsRefusedNotACrash() async throws {
        try await BackendDefinition.with(services: [Half.self]) { try halfRefused() }
    }

    func halfRefused() throws {
        let rules = """
            homeassistant: {url: "ws://127.0.0.1:1/api/websocket", token: t}
            backends:
              h: {type: half, token: k}
              a: {type: aivi, token: k}
            activities:
              washer: {backend: BACKEND, template: generic, active_when: "{{ true }}", progress: 0.5}
            """
        #expect(throws: Never.self) { try RulesLoader.load(text: rules.replacingAll("BACKEND", with: "a"), file: "r.yaml").get() }
        guard case .failure(let errors) = RulesLoader.load(text: rules.replacingAll("BACKEND", with: "h"), file: "r.yaml") else {
            Issue.record("a rule for a service without a rendering was taken")
            return
        }
        #expect(errors.description.contains("cannot be sent to half backend"))
    }

    /// A plain-HTTP service that documents an allowance is paced to it, with no transport of its own.
    @Test func aPlainHTTPServiceWithAnAllowanceIsPaced() async throws {
        enum Metered: PushService {
            static let definition = BackendDefinition(
                kind: BackendKind(named: "metered"), name: "Metered", idKey: "slug", idProblem: { _ in nil }, methods: ["POST"],
                idPath: "/m/", otherTarget: nil, configKeys: ["type", "token"], needsToken: true, templates: ["note"],
                defaultDismissAfter: .seconds(60), defaultSettle: .zero, requestsPerMinute: 30, baseURL: "http://127.0.0.1:1",
                spendsRelay: false, contentShare: .body)
        }
        try await BackendDefinition.with(services: [Metered.self]) {
            let declared = RulesFile.Backend(name: "m", kind: Metered.definition.kind, token: AccessToken("k"), baseURL: nil, freeTier: false,
                                             services: [], location: SourceLocation(file: "r.yaml", line: 1, column: 1))
            let backend = BackendFactory.make(declared, client: HTTPClient(), connection: nil)
            let pacer = try #require((backend as? HTTPPushBackend)?.sender.pacer)
            #expect(pacer.window.withLock(\.limit) == 30)
            // A push waits its turn in it (nothing listens there: the answer is a transport error, the turn booked).
            let request = BackendRequest(backend: "m", kind: Metered.definition.kind, method: "POST", target: "/m/washer", body: [:])
            _ = await backend.deliver(request, kind: .start)
            #expect(pacer.window.withLock(\.sent.count) == 1, "the push was booked in the service's allowance")
        }
    }
}
