@testable import Dispatcher
import LiveActivity
import HomeAssistant
import JSON
import Testing
@testable import LiveBridge
@testable import WebSocketTransport

/// /healthz, /metrics and /activities from what the service reports, without a socket.
struct StatusRoutesTests {
    func routes(phase: ConnectionPhase = .ready, missing: [MissingEntity] = [], failing: [String: String] = [:],
                lanes: [Dispatcher.LaneSummary] = [], log: [PushLog.Entry] = []) -> StatusRoutes {
        StatusRoutes(source: .init(connectionPhase: { phase }, missingEntities: { missing }, failingBackends: { failing },
                                   metricsText: { "livebridge_renders_total 3\n" }, lanes: { lanes }, pushLog: { log },
                                   now: { 1_700_000_000 }))
    }


    @Test func healthyWhenConnectedAndNothingIsMissing() async throws {
        let response = await routes().respond(toPath: "/healthz?verbose=1")
        #expect(response.status == 200)
        #expect(try JSONParser.parse(response.body) == ["status": "ok"])
    }

    @Test func degradedNamesTheMissingEntitiesWithTheirClosestIDs() async throws {
        let response = await routes(missing: [MissingEntity(entityID: "sensor.washr", suggestion: "sensor.washer"),
                                              MissingEntity(entityID: "sensor.gone", suggestion: nil)]).respond(toPath: "/healthz")
        #expect(response.status == 200)
        #expect(try JSONParser.parse(response.body) == ["status": "degraded", "missing_entities": [
            ["entity_id": "sensor.washr", "did_you_mean": "sensor.washer"], ["entity_id": "sensor.gone"]]])
    }

    /// PushWard's monthly quota spent: the daemon runs and pushes to the others, so degraded (not failing), saying
    /// which backend and until when; /metrics shows it as a gauge, and a delivered push clears it.
    @Test func aSpentQuotaIsDegradedAndCounted() async throws {
        let metrics = Metrics()
        metrics.push(backend: "pushward", target: "pushward", outcome: "rejected", seconds: 0.1, permanentFailure: nil, limitCode: .known(.allowanceSpent, of: PushWardSchema.definition))
        let routes = StatusRoutes(source: .init(connectionPhase: { .ready }, missingEntities: { [] }, failingBackends: { metrics.failingBackends },
                                                limitedBackends: { metrics.limitedBackends }, metricsText: { metrics.text(debounced: 0, deduplicated: 0, retries: 0) },
                                                lanes: { [] }, pushLog: { [] }, now: { 1_700_000_000 }))
        let health = await routes.respond(toPath: "/healthz")
        #expect(health.status == 200)
        #expect(try JSONParser.parse(health.body) == ["status": "degraded", "limited_backends": [
            "backend pushward: the plan's monthly updates are used up (quota.exceeded): pushes resume when the quota resets next month"]])
        let text = String(decoding: await routes.respond(toPath: "/metrics").body, as: UTF8.self)
        #expect(text.contains("livebridge_backend_limited{backend=\"pushward\",reason=\"quota.exceeded\"} 1"))
        metrics.push(backend: "pushward", target: "pushward", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        #expect(try JSONParser.parse(await routes.respond(toPath: "/healthz").body) == ["status": "ok"])
        // An Island Pulse ID the app has not registered: degraded too, with the fix.
        metrics.push(backend: "pulse", target: "pulse", outcome: "rejected", seconds: 0.1, permanentFailure: nil,
                     limitCode: .known(.notRegistered, of: IslandPulseSchema.definition))
        let unregistered = String(decoding: await routes.respond(toPath: "/healthz").body, as: UTF8.self)
        #expect(unregistered.contains("degraded") && unregistered.contains("open it on the phone once"))
    }

    @Test func failingSaysWhy() async throws {
        let rejected = await routes(phase: .rejected, failing: ["pulse": "UNAUTHORIZED", "aivi": "401"]).respond(toPath: "/healthz")
        #expect(rejected.status == 503)
        #expect(try JSONParser.parse(rejected.body) == ["status": "failing", "reasons": [
            "Home Assistant rejected the access token", "backend aivi refuses pushes (401)", "backend pulse refuses pushes (UNAUTHORIZED)"]])
        let down = await routes(phase: .disconnected).respond(toPath: "/healthz")
        #expect(try JSONParser.parse(down.body) == ["status": "failing", "reasons": ["not connected to Home Assistant (disconnected)"]])
        for phase in [ConnectionPhase.waitingForStartup, .subscribing] {
            #expect(await routes(phase: phase).respond(toPath: "/healthz").status == 200, "\(phase) is connected")
        }
    }

    /// A service's code in a reason is cut as in the logs: a probe's answer stays small.
    @Test func aHugeCodeInAReasonIsCut() async throws {
        let code = String(repeating: "E", count: 50_000)
        let response = await routes(failing: ["aivi": code]).respond(toPath: "/healthz")
        let reasons = try JSONParser.parse(response.body)["reasons"]?.arrayValue?.compactMap(\.stringValue)
        let kept = "backend aivi refuses pushes (" + String(repeating: "E", count: 971)
        #expect(reasons == [kept + "…[49030 more bytes cut]"])
        #expect(response.body.count < 1_200)
    }

    /// Every route is read-only: PUT, DELETE, PATCH, OPTIONS and the rest are refused, saying what is allowed.
    @Test(arguments: ["PUT", "DELETE", "PATCH", "OPTIONS", "POST", "HEAD"])
    func otherMethodsThanGETAre405(method: String) async {
        let response = await routes().respond(to: HTTPServerRequest(method: method, path: "/healthz", headers: [:], body: []))
        #expect(response.status == 405)
        #expect(response.headers == ["Allow": "GET"])
        #expect(await routes().respond(to: HTTPServerRequest(method: "GET", path: "/healthz", headers: [:], body: [])).status == 200)
    }

    @Test func metricsAreThePrometheusText() async {
        let response = await routes().respond(toPath: "/metrics")
        #expect(response.status == 200 && response.contentType == "text/plain; version=0.0.4")
        #expect(String(decoding: response.body, as: UTF8.self) == "livebridge_renders_total 3\n")
    }

    @Test func activitiesShowEachLaneAndItsLastPayload() async throws {
        let lanes = [Dispatcher.LaneSummary(activity: "washer", target: "aivi", phase: .running, lastDelivered: Array(#"{"state":"Washing"}"#.utf8)),
                     Dispatcher.LaneSummary(activity: "washer", target: "family/notify.mobile_app_partner", phase: .starting, lastDelivered: nil,
                                            updatesLeftThisHour: 12, relayRemaining: 480),
                     Dispatcher.LaneSummary(activity: "dryer", target: "aivi", phase: .idle, lastDelivered: nil)]
        let response = await routes(lanes: lanes).respond(toPath: "/activities")
        #expect(try JSONParser.parse(response.body) == ["activities": [
            ["activity": "washer", "target": "aivi", "backend": "aivi", "phase": "running", "last_delivered": ["state": "Washing"]],
            ["activity": "washer", "target": "family/notify.mobile_app_partner", "backend": "family", "phase": "starting",
             "updates_left_this_hour": 12, "relay_pushes_remaining": 480],
            ["activity": "dryer", "target": "aivi", "backend": "aivi", "phase": "idle"]]])
    }

    @Test func anythingElseIsNotFound() async throws {
        let response = await routes().respond(toPath: "/nothing")
        #expect(response.status == 404)
        #expect(try JSONParser.parse(response.body) == ["error": "not found: try /, /healthz, /metrics or /activities"])
    }

    /// The add-on's ingress page: served at / and asking for its state relative to itself (ingress adds a path prefix).
    @Test func theStatusPageIsThePreviewPageReadingItsStateRelatively() async {
        let response = await routes().respond(toPath: "/")
        #expect(response.status == 200 && response.contentType == "text/html; charset=utf-8")
        let html = String(decoding: response.body, as: UTF8.self)
        #expect(html.contains("fetch('api/state')"))
        #expect(!html.contains("fetch('/api/state')"))
    }

    @Test func thePageStateDrawsEachDeliveredPayloadAndMarksEndedOnes() async throws {
        let lanes = [Dispatcher.LaneSummary(activity: "washer", target: "aivi", phase: .running,
                                            lastDelivered: Array(#"{"state":"start","content":{"template":"generic","state":"Washing","progress":0.4}}"#.utf8)),
                     Dispatcher.LaneSummary(activity: "dryer", target: "pulse", phase: .idle,
                                            lastDelivered: Array(#"{"template":"progress","title":"Done","progress":1}"#.utf8)),
                     Dispatcher.LaneSummary(activity: "vacuum", target: "aivi", phase: .idle, lastDelivered: nil)]
        let log = [PushLog.Entry(at: 1_699_999_990, activity: "washer", backend: "aivi", kind: "start", outcome: "delivered", status: "200"),
                   PushLog.Entry(at: 1_699_999_995, activity: "dryer", backend: "pulse", kind: "end", outcome: "retry", status: "503")]
        let response = await routes(lanes: lanes, log: log).respond(toPath: "/api/state")
        #expect(response.status == 200)
        let state = try JSONParser.parse(response.body)
        guard case .object(let activities)? = state["activities"] else { Issue.record("no activities"); return }
        #expect(activities.keys.sorted() == ["dryer · pulse", "washer · aivi"], "a lane that never delivered is not drawn")
        #expect(activities["washer · aivi"]?["phase"] == "running" && activities["washer · aivi"]?["ended"] == false)
        #expect(activities["dryer · pulse"]?["phase"] == "ended" && activities["dryer · pulse"]?["ended"] == true)
        let svg = activities["washer · aivi"]?["svg"]?.stringValue ?? ""
        #expect(svg.hasPrefix("<svg") && svg.contains("Washing"))
        #expect(state["log"] == [
            ["at": 1_699_999_990.0, "activity": "washer · aivi", "decision": "start delivered (200)", "ended": false],
            ["at": 1_699_999_995.0, "activity": "dryer · pulse", "decision": "end retry (503)", "ended": true]])
    }

    @Test func thePushLogKeepsTheNewestUpToItsCapacity() {
        let log = PushLog(capacity: 3)
        for i in 0..<5 {
            log.append(.init(at: Double(i), activity: "a\(i)", backend: "b", kind: "update", outcome: "delivered", status: "200"))
        }
        #expect(log.recent.map(\.activity) == ["a2", "a3", "a4"])
        // Oldest first at every fill, before and after the ring wraps (twice).
        for count in 0...8 {
            let log = PushLog(capacity: 3)
            for i in 0..<count {
                log.append(.init(at: Double(i), activity: "a\(i)", backend: "b", kind: "update", outcome: "delivered", status: "200"))
            }
            #expect(log.recent.map(\.activity) == (0..<count).suffix(3).map { "a\($0)" }, "after \(count)")
        }
    }
}
