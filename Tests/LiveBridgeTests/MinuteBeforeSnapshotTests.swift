import FakePushServices
import Foundation
import HomeAssistantSimulator
import JSON
import Platform
import Testing
@testable import LiveBridge

/// The minute's tick before the first snapshot: LiveBridge restarted with an activity on the phone (`state.json`) while
/// Home Assistant is still starting. The engine has no states yet, so a condition reading the time and an entity is
/// false: evaluated then, it ended the activity, and the snapshot started it again.
@Suite(.timeLimit(.minutes(1)))
struct MinuteBeforeSnapshotTests {
    @Test func aTickBeforeTheFirstSnapshotEndsNothingRestored() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        let backend = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-minute-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
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

        // First run: the washer starts; stopping saves it as on the phone.
        await simulator.setStates([("sensor.washer", "running", [:])])
        do {
            // Its own scope: the service holds the data directory's lock until it is gone.
            let (firstSignals, stopFirst) = AsyncStream.makeStream(of: UnixSignal.self)
            let firstService = try LiveBridgeService(options: options, logger: Logger(level: .warning) { _ in })
            let first = Task { try await ServiceRunner.run(firstService, signals: firstSignals) }
            #expect(await backend.wait { $0.count == 1 })
            stopFirst.yield(.terminate)
            try await first.value
        }

        // Home Assistant restarts and stays STARTING: no snapshot yet. LiveBridge starts again, and a minute passes.
        await simulator.restart(coreState: "STARTING")
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self)
        let (asks, asked) = AsyncStream.makeStream(of: Void.self)
        var second = options
        second.nextMinute = {
            asked.yield()
            for await _ in ticks { return true }
            return false
        }
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let lines = Locked<[String]>([])
        let service = try LiveBridgeService(options: second, logger: Logger(level: .info) { line in lines.withLock { $0.append(line) } })
        let run = Task { try await ServiceRunner.run(service, signals: signals) }
        var asking = asks.makeAsyncIterator()
        _ = await asking.next()
        #expect(await simulator.wait { $0.connectionsAccepted >= 2 && $0.commands(ofType: "get_config").count >= 2 })
        tick.yield()
        _ = await asking.next()  // the tick was handled: the clock is asked for the next minute
        await simulator.setCoreState("RUNNING")
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 2 })
        await simulator.setStates([("sensor.washer", "idle", [:])])
        #expect(await backend.wait { $0.count >= 2 })
        send.yield(.terminate)
        try await run.value
        let actions = backend.requests.map { $0.body?["state"]?.stringValue ?? "?" }
        #expect(actions == ["ONGOING", "IDLE"], "one start, one end: \(actions)")
    }
}
