import ProcessMeasurement
import FakePushServices
import Foundation
import HTTPClient
import HomeAssistantSimulator
import JSON
import Testing
import WebSocketTransport

/// `livebridge run` with one activity at two backends: each gets its own start and end, `/activities` shows each
/// target, and an activity older than `renew_after` is ended and started again once before it ends.
@Suite(.timeLimit(.minutes(1)))
struct LifecycleDaemonTests {
    @Test func anActivityAtTwoBackendsRenewsOnceAtEachAndEndsAtEach() async throws {
        let simulator = try HomeAssistantSimulator(token: "ha-renew-token")
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-renew-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        homeassistant: { url: "\(simulator.url)", token: ha-renew-token }
        backends:
          aivi: { type: aivi, token: aivi-test-token, base_url: \(service.baseURL) }
          pulse: { type: islandpulse, token: pulse-test-id, base_url: \(service.baseURL) }
        defaults: { debounce: 0s, max_wait: 1s, min_interval: 0s }
        activities:
          washer:
            backend: [aivi, pulse]
            renew_after: 2s
            active_when: "{{ is_state('sensor.washer_status', 'running') }}"
            template: generic
            state: Washing
            progress: 0.5
        status: { listen: "127.0.0.1:0" }
        """.write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        await simulator.setState("sensor.washer_status", "running")
        let daemon = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data"])
        let port = try #require(await statusPort(of: daemon), "\(daemon.stderr.lines.joined(separator: "\n"))")
        #expect(await service.wait { $0.count >= 2 })
        let activities = try JSONParser.parse(try await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/activities")).body)
        #expect(activities["activities"]?.arrayValue?.map { $0["target"]?.stringValue ?? "" } == ["aivi", "pulse"])
        #expect(activities["activities"]?.arrayValue?.first?["updates_left_this_hour"] == 15)

        // The renewal: an end and a start at each backend, two seconds after the start (again every two seconds while
        // it runs; under a sanitizer's load the test may see more than one).
        #expect(await service.wait { $0.count >= 6 })
        await simulator.setState("sensor.washer_status", "idle")
        #expect(await service.wait { requests in
            requests.last { $0.path == "/activity/washer" }?.body?["state"] == "IDLE" && requests.last { $0.path == "/notify" }?.body?["action"] == "end"
        })
        let aivi = service.requests.filter { $0.path == "/activity/washer" }.map { $0.body?["state"]?.stringValue ?? "" }
        let pulse = service.requests.filter { $0.path == "/notify" }.map { $0.body?["action"]?.stringValue ?? "" }
        let renewals = aivi.count / 2 - 1
        #expect(renewals >= 1)
        #expect(aivi == Array(repeating: ["ONGOING", "IDLE"], count: renewals + 1).flatMap { $0 }, "each renewal an end then a start; then the end")
        #expect(pulse == Array(repeating: ["start", "end"], count: pulse.count / 2).flatMap { $0 } && pulse.count >= 4)
        // Each renewal is logged when it is queued; one queued just as the washer stopped is replaced by the end.
        let logged = daemon.stderr.lines.filter { $0.contains("activity washer at aivi: renewed") }.count
        #expect(logged == renewals || logged == renewals + 1, "each renewal logged")
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }
}

/// `livebridge run` with one activity at all five backends — Aivi, Island Pulse, Home Assistant's own (the simulator's
/// notify service), PushWard and ActivitySmith through the fakes: each starts, and each gets its end (PushWard in two
/// phases, the completion frame then ended; ActivitySmith a DELETE with the final content).
@Suite(.timeLimit(.minutes(1)))
struct FiveBackendsDaemonTests {
    @Test func anActivityAtFiveServicesStartsAndEndsAtEach() async throws {
        let simulator = try HomeAssistantSimulator(token: "ha-pushward-token")
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-pushward-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        homeassistant: { url: "\(simulator.url)", token: ha-pushward-token }
        backends:
          aivi: { type: aivi, token: aivi-test-token, base_url: \(service.baseURL) }
          pulse: { type: islandpulse, token: pulse-test-id, base_url: \(service.baseURL) }
          ward: { type: pushward, token: pushward-test-key, base_url: \(service.baseURL) }
          smith: { type: activitysmith, token: activitysmith-test-key, base_url: \(service.baseURL) }
          phone: { type: homeassistant, service: notify.mobile_app_phone }
        defaults: { debounce: 0s, max_wait: 1s, min_interval: 0s, start_settle: 0s }
        activities:
          washer:
            backend: [aivi, pulse, phone, ward, smith]
            dismiss_after: 1s
            active_when: "{{ is_state('sensor.washer_status', 'running') }}"
            template: progress
            progress: { style: simple, value: 0.4 }
            header_left: Washing
            on_end: { header_left: Done, progress: { style: simple, value: 1 } }
        """.write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        await simulator.setState("sensor.washer_status", "running")
        let daemon = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data"])
        #expect(await service.wait { requests in requests.filter { $0.path == "/activities/washer" }.count == 1 && requests.count == 5 })
        #expect(service.pushWardOngoing() == ["washer"] && service.activitySmithStreams() == ["washer"])
        await simulator.setState("sensor.washer_status", "idle")
        #expect(await service.wait { $0.last { $0.path == "/activities/washer" }?.body?["state"] == "ended" })
        let ward = service.requests.filter { $0.path.hasPrefix("/activities") }.map { "\($0.method) \($0.body?["state"]?.stringValue ?? "") \($0.body?["content"]?["state"]?.stringValue ?? "")" }
        #expect(ward == ["POST  ", "PATCH ongoing Washing", "PATCH  Done", "PATCH ended Done"], "the completion frame keeps the state PushWard holds")
        #expect(service.requests.contains { $0.path == "/activity/washer" && $0.body?["state"] == "IDLE" })
        #expect(service.requests.contains { $0.path == "/notify" && $0.body?["action"] == "end" })
        #expect(await service.wait { $0.contains { $0.method == "DELETE" && $0.path == "/live-activity/stream/washer" } })
        #expect(service.pushWardOngoing().isEmpty && service.activitySmithStreams().isEmpty)
        // Home Assistant's phone: the start, the final content, then clear_notification a second later.
        #expect(await simulator.wait { record in record.serviceCalls.contains { $0["service_data"]?["message"] == "clear_notification" } })
        let phone = simulator.record.serviceCalls.filter { $0["domain"] == "notify" }.map { $0["service_data"]?["message"]?.stringValue ?? "" }
        #expect(phone.first == "Washing" && phone.last == "clear_notification", "\(phone)")
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }
}
