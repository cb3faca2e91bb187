import Dispatcher
import FoundationEssentials
import HomeAssistant
import JSON
import Platform
import Preview
import WebSocketTransport

/// The status listener's routes: `/healthz` (connected, backends accepting, entities present), `/metrics`
/// (Prometheus text), `/activities` (each lane's phase and last payload) and `/`, the preview page (each activity's last
/// payload drawn as the phone shows it, and the push log, from `/api/state`): the add-on's ingress page. What they
/// report on comes in as a `Source`, so they are tested in memory.
struct StatusRoutes: Sendable {
    /// What the routes read, each when asked.
    struct Source: Sendable {
        var connectionPhase: @Sendable () -> ConnectionPhase
        var missingEntities: @Sendable () -> [MissingEntity]
        /// Backends refusing pushes for good, with the code they gave.
        var failingBackends: @Sendable () -> [String: String]
        /// Backends stopped for a while by their service's limit, with why: degraded, not failing.
        var limitedBackends: @Sendable () -> [String: String] = { [:] }
        var metricsText: @Sendable () async -> String
        var lanes: @Sendable () async -> [Dispatcher.LaneSummary]
        var pushLog: @Sendable () -> [PushLog.Entry] = { [] }
        /// Seconds since 1970, for the drawings' timers.
        var now: @Sendable () -> Double = { Date().timeIntervalSince1970 }
    }

    let source: Source

    /// Every route is read-only: any method but GET is answered 405 with `Allow: GET`.
    func respond(to request: HTTPServerRequest) async -> HTTPServerResponse {
        guard request.method == "GET" else {
            return HTTPServerResponse(status: 405, json: #"{"error":"only GET is served here"}"#, headers: ["Allow": "GET"])
        }
        return await respond(toPath: request.path)
    }

    func respond(toPath requestPath: String) async -> HTTPServerResponse {
        let path = requestPath.split(separator: "?").first.map(String.init) ?? requestPath
        switch path {
        case "/healthz":
            return Self.health(phase: source.connectionPhase(), failingBackends: source.failingBackends(),
                               missing: source.missingEntities(), limited: source.limitedBackends())
        case "/metrics":
            return HTTPServerResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Array(await source.metricsText().utf8))
        case "/activities":
            return Self.activities(await source.lanes())
        case "/", "/index.html":
            return HTTPServerResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(PreviewPage.html.utf8))
        case "/api/state":
            return HTTPServerResponse(status: 200, json: Self.previewState(await source.lanes(), log: source.pushLog(), now: source.now()).jsonText)
        default:
            return HTTPServerResponse(status: 404, json: #"{"error":"not found: try /, /healthz, /metrics or /activities"}"#)
        }
    }

    /// 200 `ok` or `degraded` (running, but entities the rules read are missing, or a backend is stopped until its
    /// service's quota resets: not as the rules intend); 503 `failing` with the reasons (not connected, token
    /// rejected, a backend refusing pushes).
    static func health(phase: ConnectionPhase, failingBackends: [String: String], missing: [MissingEntity],
                       limited: [String: String] = [:]) -> HTTPServerResponse {
        var reasons: [String] = []
        switch phase {
        case .ready, .subscribing, .waitingForStartup: break
        case .rejected: reasons.append("Home Assistant rejected the access token")
        case let phase: reasons.append("not connected to Home Assistant (\(phase.rawValue))")
        }
        for (backend, code) in failingBackends.sorted(by: { $0.key < $1.key }) {
            reasons.append("backend \(backend) refuses pushes (\(code))")
        }
        var body: [String: JSONValue] = ["status": .string(!reasons.isEmpty ? "failing" : missing.isEmpty && limited.isEmpty ? "ok" : "degraded")]
        if !limited.isEmpty {
            body["limited_backends"] = .array(limited.keys.sorted().map { .string("backend \($0): \(limited[$0]!)") })
        }
        // Reasons carry a service's code and Home Assistant's names: bounded, as in the logs.
        if !reasons.isEmpty { body["reasons"] = .array(reasons.map { .string(OutsideText.bounded($0)) }) }
        if !missing.isEmpty {
            body["missing_entities"] = .array(missing.map { entity in
                var item: [String: JSONValue] = ["entity_id": .string(OutsideText.bounded(entity.entityID))]
                if let suggestion = entity.suggestion { item["did_you_mean"] = .string(OutsideText.bounded(suggestion)) }
                return .object(item)
            })
        }
        return HTTPServerResponse(status: reasons.isEmpty ? 200 : 503, json: JSONValue.object(body).jsonText)
    }

    /// The preview page's state: each lane that has delivered a payload, drawn at `now` (an idle lane has ended: its
    /// final content, marked ended), and the push log, oldest first.
    static func previewState(_ lanes: [Dispatcher.LaneSummary], log: [PushLog.Entry], now: Double) -> JSONValue {
        var activities: [String: JSONValue] = [:]
        for lane in lanes {
            guard let body = lane.lastDelivered, let payload = try? JSONParser.parse(body) else { continue }
            let key = "\(lane.activity) · \(lane.target)"
            activities[key] = .object(["svg": .string(PreviewRenderer.svg(payload, at: now, title: lane.activity, ended: lane.phase == .idle)),
                                       "phase": .string(lane.phase == .idle ? "ended" : lane.phase.rawValue),
                                       "ended": .bool(lane.phase == .idle)])
        }
        return .object(["activities": .object(activities), "log": .array(log.map(\.pageJSON))])
    }

    /// Each lane: activity, target (a backend, or one of its phones), backend, phase, and the last payload delivered
    /// (as JSON when it is).
    static func activities(_ lanes: [Dispatcher.LaneSummary]) -> HTTPServerResponse {
        let items: [JSONValue] = lanes.map { lane in
            var item: [String: JSONValue] = ["activity": .string(lane.activity), "target": .string(lane.target),
                                             "backend": .string(DeliveryState.backend(ofTarget: lane.target)), "phase": .string(lane.phase.rawValue)]
            if let left = lane.updatesLeftThisHour { item["updates_left_this_hour"] = .int(left) }
            if let left = lane.relayRemaining { item["relay_pushes_remaining"] = .int(left) }
            if let body = lane.lastDelivered { item["last_delivered"] = (try? JSONParser.parse(body)) ?? .string(String(decoding: body, as: UTF8.self)) }
            return .object(item)
        }
        return HTTPServerResponse(status: 200, json: JSONValue.object(["activities": .array(items)]).jsonText)
    }
}
