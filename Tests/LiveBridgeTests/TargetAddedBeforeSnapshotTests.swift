import FakePushServices
import Foundation
import HomeAssistantSimulator
import JSON
import Platform
import Testing
@testable import LiveBridge

/// (From an independent review's attack.) A reload before the first snapshot that adds a target to an activity restored from state.json.
@Suite(.timeLimit(.minutes(1)))
struct TargetAddedBeforeSnapshotTests {
    @Test func aTargetAddedBeforeTheFirstSnapshotIsStarted() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        let backend = try FakePushService()
        let second = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-added-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        func rules(_ backends: String) -> String {
            """
            homeassistant: { url: \(simulator.url), token: t, restart_grace: 0s }
            backends:
              aivi: { type: aivi, token: aivi-test-token, base_url: "\(backend.baseURL)" }
              second: { type: aivi, token: aivi-second-token, base_url: "\(second.baseURL)" }
            defaults: { debounce: 0s, max_wait: 1s, min_interval: 0s }
            activities:
              washer:
                backend: \(backends)
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: 0.5
            """
        }
        try rules("aivi").write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        let options = LiveBridgeService.Options(configPath: folder + "/rules.yaml", dataDirectory: folder + "/data")
        try await MinuteBeforeSnapshotTests.firstRun(options, simulator, backend)
        let (signals, stop) = AsyncStream.makeStream(of: UnixSignal.self)
        let service = try LiveBridgeService(options: options, logger: Logger(level: .warning) { _ in })
        let run = Task { try await ServiceRunner.run(service, signals: signals) }
        #expect(await simulator.wait { $0.connectionsAccepted >= 2 && $0.commands(ofType: "get_config").count >= 2 })
        try rules("[aivi, second]").write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        await service.reload()
        await simulator.setCoreState("RUNNING")
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 2 })
        let started = await second.wait(timeout: .seconds(4), until: { $0.contains { $0.body?["state"] == "ONGOING" } })
        #expect(started, "the added target got no start: second saw \(second.requests.map { $0.body?["state"]?.stringValue ?? "?" })")
        stop.yield(.terminate)
        try await run.value
    }
}
