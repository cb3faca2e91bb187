import Foundation
import JSON
import HomeAssistantSimulator
import Platform
import Synchronization
import Testing
@testable import LiveBridge

/// The daemon's service in memory, driven as `livebridge run` drives it: signals in, graceful shutdown out.
struct ServiceLifecycleTests {
    func service(homeAssistant url: String) throws -> (LiveBridgeService, Locked<[String]>) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-service-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try """
            homeassistant: { url: \(url), token: t }
            backends: { aivi: { type: aivi, token: a, base_url: "http://127.0.0.1:9" } }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: 0.5
            """.write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        let lines = Locked<[String]>([])
        let logger = Logger(level: .info) { line in lines.withLock { $0.append(line) } }
        return (try LiveBridgeService(options: .init(configPath: folder + "/rules.yaml", dataDirectory: folder + "/data"), logger: logger), lines)
    }

    @Test func terminateClosesTheSocketAndReturns() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        await simulator.setStates([("sensor.washer", "idle", [:])])
        let (service, lines) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals) }
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 1 })
        send.yield(.terminate)
        try await running.value
        #expect(await simulator.wait { $0.openConnections == 0 })
        #expect(lines.withLock { $0.contains { $0.contains("msg=\"stopping: sending what is due\"") } })
    }

    @Test func terminateBeforeTheServiceIsUpEndsItCleanly() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        let (service, _) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        send.yield(.terminate)
        try await ServiceRunner.run(service, signals: signals)
        #expect(await simulator.wait { $0.openConnections == 0 })
    }

    @Test func aRejectedTokenIsThrownOnceTheServiceIsStopped() async throws {
        let simulator = try HomeAssistantSimulator(token: "another")
        defer { simulator.stop() }
        let (service, lines) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals) }
        // An upper bound, generous for the sanitizers' slow builds on a loaded machine.
        #expect(await simulator.wait(timeout: .seconds(30)) { $0.connectionsAccepted >= 1 && $0.openConnections == 0 })
        send.yield(.terminate)
        await #expect(throws: LiveBridgeService.TokenRejectedError.self) { try await running.value }
        #expect(lines.withLock { $0.contains { $0.contains("Home Assistant rejected the access token") } })
    }

    /// A bad blueprint event is told to Home Assistant (persistent_notification.create); Home Assistant goes silent
    /// before answering. SIGTERM then should still end the service within the flush deadline (5 s) plus the socket's
    /// close (2 s), as before the change (stop() closed the connection, failing the pending command at once).
    @Test(.timeLimit(.minutes(1))) func terminateWhileABlueprintProblemIsToldToASilentHomeAssistant() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        await simulator.setStates([("sensor.washer", "idle", [:])])
        let (service, lines) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals) }
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 1 })
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_events").contains { $0.message["event_type"] == "livebridge_activity" } })
        await simulator.setUnresponsive(true)
        await simulator.fireEvent("livebridge_activity", data: ["payload": ["template": "generic"]])
        for _ in 0..<50 where !lines.withLock({ $0.contains { $0.contains("invalid livebridge_activity event") } }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(lines.withLock { $0.contains { $0.contains("invalid livebridge_activity event") } })
        try await Task.sleep(for: .milliseconds(200))
        let clock = ContinuousClock()
        let started = clock.now
        send.yield(.terminate)
        try await running.value
        let took = clock.now - started
        #expect(took < .seconds(8), "SIGTERM took \(took) to end run()")
    }
}
