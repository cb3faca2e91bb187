import FakePushServices
import Foundation
import HomeAssistantSimulator
import JSON
import Platform
import Testing
@testable import LiveBridge

/// Before the first snapshot: LiveBridge restarted with an activity on the phone (`state.json`) while Home Assistant
/// is still starting. The engine has no states yet, so a condition reading an entity is false: evaluated then (the
/// minute's tick, a reload), it ended the activity, and the snapshot started it again.
@Suite(.timeLimit(.minutes(1)))
struct MinuteBeforeSnapshotTests {
    /// A Home Assistant still starting, and the options of a LiveBridge whose first run started the washer (a
    /// condition reading the time and an entity) and saved it as on the phone. The caller removes `folder`.
    func restoredWasher() async throws -> (simulator: HomeAssistantSimulator, backend: FakePushService, options: LiveBridgeService.Options, folder: String) {
        let simulator = try HomeAssistantSimulator(token: "t")
        let backend = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-minute-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try """
            homeassistant: { url: \(simulator.url), token: t, restart_grace: 0s }
            backends: { aivi: { type: aivi, token: aivi-test-token, base_url: "\(backend.baseURL)" } }
            defaults: { debounce: 0s, max_wait: 1s, min_interval: 0s }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') and now().year > 2000 }}"
                template: generic
                progress: 0.5
            """.write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        let options = LiveBridgeService.Options(configPath: folder + "/rules.yaml", dataDirectory: folder + "/data")
        try await Self.firstRun(options, simulator, backend)
        return (simulator, backend, options, folder)
    }

    /// A first run with the washer running: started at `backend`, then stopped (saved as on the phone); then Home
    /// Assistant restarts and stays STARTING.
    static func firstRun(_ options: LiveBridgeService.Options, _ simulator: HomeAssistantSimulator, _ backend: FakePushService) async throws {
        await simulator.setStates([("sensor.washer", "running", [:])])
        // Its own scope: the service holds the data directory's lock until it is gone.
        do {
            let (signals, stop) = AsyncStream.makeStream(of: UnixSignal.self)
            let service = try LiveBridgeService(options: options, logger: Logger(level: .warning) { _ in })
            let first = Task { try await ServiceRunner.run(service, signals: signals) }
            #expect(await backend.wait { $0.count == 1 })
            stop.yield(.terminate)
            try await first.value
        }
        await simulator.restart(coreState: "STARTING")
    }

    /// Home Assistant runs again, the washer stops; LiveBridge stops. What the backend was sent, in order.
    func finish(_ simulator: HomeAssistantSimulator, _ backend: FakePushService, _ stop: AsyncStream<UnixSignal>.Continuation,
                _ run: Task<Void, any Error>) async throws -> [String] {
        await simulator.setCoreState("RUNNING")
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 2 })
        await simulator.setStates([("sensor.washer", "idle", [:])])
        #expect(await backend.wait { $0.last?.body?["state"] == "IDLE" && $0.count >= 2 })
        stop.yield(.terminate)
        try await run.value
        return backend.requests.map { $0.body?["state"]?.stringValue ?? "?" }
    }

    @Test func aTickBeforeTheFirstSnapshotEndsNothingRestored() async throws {
        let (simulator, backend, options, folder) = try await restoredWasher()
        defer { simulator.stop(); try? FileManager.default.removeItem(atPath: folder) }
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self)
        let (asks, asked) = AsyncStream.makeStream(of: Void.self)
        var second = options
        second.nextMinute = {
            asked.yield()
            for await _ in ticks { return true }
            return false
        }
        let (signals, stop) = AsyncStream.makeStream(of: UnixSignal.self)
        let service = try LiveBridgeService(options: second, logger: Logger(level: .warning) { _ in })
        let run = Task { try await ServiceRunner.run(service, signals: signals) }
        var asking = asks.makeAsyncIterator()
        _ = await asking.next()
        #expect(await simulator.wait { $0.connectionsAccepted >= 2 && $0.commands(ofType: "get_config").count >= 2 })
        tick.yield()
        _ = await asking.next()  // the tick was handled: the clock is asked for the next minute
        let actions = try await finish(simulator, backend, stop, run)
        #expect(actions == ["ONGOING", "IDLE"], "one start, one end: \(actions)")
    }

    /// The same through a reload (SIGHUP) before the first snapshot. (From an independent review's attack.)
    @Test func aReloadBeforeTheFirstSnapshotEndsNothingRestored() async throws {
        let (simulator, backend, options, folder) = try await restoredWasher()
        defer { simulator.stop(); try? FileManager.default.removeItem(atPath: folder) }
        let (signals, stop) = AsyncStream.makeStream(of: UnixSignal.self)
        let service = try LiveBridgeService(options: options, logger: Logger(level: .warning) { _ in })
        let run = Task { try await ServiceRunner.run(service, signals: signals) }
        #expect(await simulator.wait { $0.connectionsAccepted >= 2 && $0.commands(ofType: "get_config").count >= 2 })
        await service.reload()
        let actions = try await finish(simulator, backend, stop, run)
        #expect(actions == ["ONGOING", "IDLE"], "one start, one end: \(actions)")
    }
}
