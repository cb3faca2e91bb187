import Foundation
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
}
