@testable import Dispatcher
import HomeAssistant
import JSON
import Testing
@testable import LiveBridge

/// /healthz, /metrics and /activities from what the service reports, without a socket.
struct StatusRoutesTests {
    func routes(phase: ConnectionPhase = .ready, missing: [MissingEntity] = [], failing: [String: String] = [:],
                lanes: [Dispatcher.LaneSummary] = []) -> StatusRoutes {
        StatusRoutes(source: .init(connectionPhase: { phase }, missingEntities: { missing }, failingBackends: { failing },
                                   metricsText: { "livebridge_renders_total 3\n" }, lanes: { lanes }))
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

    @Test func metricsAreThePrometheusText() async {
        let response = await routes().respond(toPath: "/metrics")
        #expect(response.status == 200 && response.contentType == "text/plain; version=0.0.4")
        #expect(String(decoding: response.body, as: UTF8.self) == "livebridge_renders_total 3\n")
    }

    @Test func activitiesShowEachLaneAndItsLastPayload() async throws {
        let lanes = [Dispatcher.LaneSummary(activity: "washer", backend: "aivi", phase: .running, lastDelivered: Array(#"{"state":"Washing"}"#.utf8)),
                     Dispatcher.LaneSummary(activity: "dryer", backend: "aivi", phase: .idle, lastDelivered: nil)]
        let response = await routes(lanes: lanes).respond(toPath: "/activities")
        #expect(try JSONParser.parse(response.body) == ["activities": [
            ["activity": "washer", "backend": "aivi", "phase": "running", "last_delivered": ["state": "Washing"]],
            ["activity": "dryer", "backend": "aivi", "phase": "idle"]]])
    }

    @Test func anythingElseIsNotFound() async throws {
        let response = await routes().respond(toPath: "/")
        #expect(response.status == 404)
        #expect(try JSONParser.parse(response.body) == ["error": "not found: try /healthz, /metrics or /activities"])
    }
}
