import FakePushServices
import Foundation
import HomeAssistantSimulator
import ProcessMeasurement
import Testing
import JSON

/// Faults `livebridge run` must survive, the real binary between the simulator and the fake push service.
/// Part of `make resilience` (its name holds "ResilienceTests"; `make test` skips it: the outage case takes minutes).
/// Each case states what must hold: no crash, no second start, the end delivered, memory bounded.
@Suite(.timeLimit(.minutes(5)))
struct DaemonResilienceTests {
    static let token = "llat-resilience-7c2"

    struct Setup {
        let simulator: HomeAssistantSimulator
        let service: FakePushService
        let folder: String
        var config: String { folder + "/livebridge.yaml" }
        var data: String { folder + "/data" }

        /// The washer on `backend` (aivi, pulse, ward or smith), debounce 0 so every change is one push.
        init(backend: String = "aivi", homeAssistant extra: String = "") async throws {
            simulator = try HomeAssistantSimulator(token: DaemonResilienceTests.token)
            service = try FakePushService()
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-resilience-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
            // Aivi's progress, which PushWard and ActivitySmith take mapped; Island Pulse its own layout.
            let fields = backend != "pulse" ? """
                    progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}" }
                    header_left: Washing
                    on_end: { header_left: Done }
                """ + (backend == "aivi" ? "" : "\n    dismiss_after: 0s") : """
                    message: "{{ states('sensor.washer_progress') }} %"
                    progress: "{{ states('sensor.washer_progress') | float(0) / 100 }}"
                """
            let rules = """
                homeassistant: { url: \(simulator.url), token: \(DaemonResilienceTests.token)\(extra) }
                backends:
                  aivi: { type: aivi, token: aivi-test-token, base_url: \(service.baseURL) }
                  pulse: { type: islandpulse, token: pulse-test-id, base_url: \(service.baseURL) }
                  ward: { type: pushward, token: pushward-test-key, base_url: \(service.baseURL) }
                  smith: { type: activitysmith, token: activitysmith-test-key, base_url: \(service.baseURL) }
                defaults: { backend: \(backend), debounce: 0s, max_wait: 0s, min_interval: 0s }
                activities:
                  washer:
                    active_when: "{{ is_state('sensor.washer_status', 'running') }}"
                    template: progress

                """ + fields
            try rules.write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
            await simulator.setState("sensor.washer_status", "running")
            await simulator.setState("sensor.washer_progress", "0")
        }

        func run() throws -> Subprocess {
            try Subprocess(["run", "--config", config, "--data-dir", data])
        }

        /// `livebridge run`, once the washer's start has reached the backend.
        func runStarted() async throws -> Subprocess {
            let livebridge = try run()
            #expect(await service.wait { Self.pushCount($0) == 1 })
            return livebridge
        }

        /// Pushes that carry content: PushWard's creation of an activity (before its start's content) is not one.
        static func pushCount(_ requests: [FakePushService.Recorded]) -> Int {
            requests.filter { $0.path != "/activities" }.count
        }

        /// What each push said: Aivi's state and progress, Island Pulse's action and message, PushWard's request and
        /// state, ActivitySmith's method and percentage.
        var pushes: [String] {
            service.requests.map { request in
                if let action = request.body?["action"]?.stringValue { return "\(action) \(request.body?["message"]?.stringValue ?? "-")" }
                if request.path.hasPrefix("/live-activity/stream/") {
                    return "\(request.method) \(request.body?["content_state"]?["percentage"]?.doubleValue.map { String($0) } ?? "?")"
                }
                if request.path == "/activities" { return "create" }
                if request.path.hasPrefix("/activities/") {
                    // An update says no state: PushWard keeps the one it holds ("kept").
                    return "\(request.body?["state"]?.stringValue ?? "kept") \(request.body?["content"]?["progress"]?.doubleValue.map { String($0) } ?? "?")"
                }
                let value = request.body?["content"]?["progress"]?["value"]?.doubleValue.map { String($0) } ?? "?"
                return "\(request.body?["state"]?.stringValue ?? "?") \(value)"
            }
        }
    }

    static func starts(_ livebridge: Subprocess) -> Int {
        livebridge.stderr.lines.filter { $0.contains("msg=push") && $0.contains("kind=start") }.count
    }

    /// Holds: across five Home Assistant restarts the activity goes on with updates (one start in all), its end is
    /// delivered, and memory does not grow with the restarts.
    @Test(arguments: [
        ("aivi", ["ONGOING 0.0", "ONGOING 0.1", "ONGOING 0.2", "ONGOING 0.3", "ONGOING 0.4", "ONGOING 0.5", "IDLE 0.5"]),
        ("ward", ["create", "ongoing 0.0", "kept 0.1", "kept 0.2", "kept 0.3", "kept 0.4", "kept 0.5", "ended 0.5"]),
        ("smith", ["PUT 0.0", "PUT 10.0", "PUT 20.0", "PUT 30.0", "PUT 40.0", "PUT 50.0", "DELETE 50.0"]),
    ])
    func homeAssistantRestartingMidActivity(backend: String, expected: [String]) async throws {
        let s = try await Setup(backend: backend)
        defer { s.simulator.stop() }
        let livebridge = try await s.runStarted()
        var rss: [Double] = []
        for round in 1...5 {
            await s.simulator.restart(coreState: "STARTING")
            #expect(await livebridge.stderr.wait { $0.filter { $0.contains("Home Assistant is STARTING") }.count == round })
            await s.simulator.setCoreState("RUNNING")
            #expect(await livebridge.stderr.wait { $0.filter { $0.contains("msg=\"ready:") }.count == round + 1 })
            await s.simulator.setState("sensor.washer_progress", String(round * 10))
            #expect(await s.service.wait { Setup.pushCount($0) == round + 1 })
            rss.append(ProcessProbe(pid: livebridge.process.pid).memory.rss)
        }
        await s.simulator.setState("sensor.washer_status", "idle")
        #expect(await s.service.wait { Setup.pushCount($0) == 7 })
        #expect(s.pushes == expected)
        #expect(Self.starts(livebridge) == 1)
        #expect(rss.last! - rss.first! < 4, "RSS after each restart (MiB): \(rss)")
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }

    /// Holds: when Home Assistant stops answering, the missing pong is noticed within the configured timeout, the
    /// link is dialled again, and the change made meanwhile arrives as an update, not a second start.
    @Test func theNetworkGoingSilent() async throws {
        let s = try await Setup(homeAssistant: ", ping_interval: 1s, pong_timeout: 1s")
        defer { s.simulator.stop() }
        let livebridge = try await s.runStarted()
        await s.simulator.setUnresponsive(true)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("no pong within 1s") } })
        await s.simulator.setState("sensor.washer_progress", "60")
        await s.simulator.setUnresponsive(false)
        // A redial that lands while the server is still silent waits out the 30 s auth timeout, then dials again.
        #expect(await s.service.wait(timeout: .seconds(45)) { $0.count == 2 })
        await s.simulator.setState("sensor.washer_status", "idle")
        #expect(await s.service.wait { $0.count == 3 })
        #expect(s.pushes == ["ONGOING 0.0", "ONGOING 0.6", "IDLE 0.6"])
        #expect(Self.starts(livebridge) == 1)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }

    /// Holds: with the backend answering 503 for two minutes, LiveBridge retries with back-off (not in a tight loop),
    /// stays up with bounded memory, and when the backend is back the end is delivered, once. At Aivi, PushWard and
    /// ActivitySmith (the cases run side by side).
    @Test(arguments: [
        ("aivi", ["ONGOING 0.0", "IDLE 0.5"]), ("ward", ["create", "ongoing 0.0", "ended 0.5"]), ("smith", ["PUT 0.0", "DELETE 50.0"]),
    ])
    func aBackendDownForTwoMinutesThenBack(backend: String, expected: [String]) async throws {
        let s = try await Setup(backend: backend)
        defer { s.simulator.stop() }
        let livebridge = try await s.runStarted()
        let before = ProcessProbe(pid: livebridge.process.pid).memory.rss
        s.service.setDown(true)
        await s.simulator.setState("sensor.washer_progress", "50")
        await s.simulator.setState("sensor.washer_status", "idle")
        // The outage is the condition under test, not a stand-in for synchronisation.
        try await Task.sleep(for: .seconds(120))
        let refused = s.service.refusedWhileDown
        let during = ProcessProbe(pid: livebridge.process.pid).memory.rss
        s.service.setDown(false)
        // Back-off is capped at 60 s: the end goes out on the next attempt.
        #expect(await s.service.wait(timeout: .seconds(75)) { Setup.pushCount($0) >= 2 })
        #expect(s.pushes == expected)
        #expect(refused >= 5 && refused <= 20, "refused pushes during the outage: \(refused)")
        #expect(during - before < 4, "RSS before \(before) MiB, during the outage \(during) MiB")
        #expect(Self.starts(livebridge) == 1)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }

    /// Holds: killed while Island Pulse holds the start's answer, the next run knows a start may be on the phone
    /// (written ahead): it goes on with an update and delivers the end — never a second start.
    @Test(arguments: [
        ("pulse", ["start 0 %", "update 40 %", "end 40 %"]),
        // Killed while PushWard held the creation: the update finds no activity (404), creates it and sends its content.
        ("ward", ["create", "ongoing 0.4", "create", "ongoing 0.4", "ended 0.4"]),
        // ActivitySmith's stream is an upsert: the update starts it if the start never landed.
        ("smith", ["PUT 0.0", "PUT 40.0", "DELETE 40.0"]),
    ])
    func killMinus9MidPushThenRestart(backend: String, expected: [String]) async throws {
        let s = try await Setup(backend: backend)
        defer { s.simulator.stop() }
        s.service.script([.init(status: 200, body: #"{"success":true}"#, delay: .seconds(5))])
        let first = try s.run()
        #expect(await s.service.wait { $0.count == 1 })
        first.signal(SIGKILL)
        _ = await first.exitStatus()
        await s.simulator.setState("sensor.washer_progress", "40")
        let second = try s.run()
        #expect(await s.service.wait { $0.count == expected.count - 1 })
        await s.simulator.setState("sensor.washer_status", "idle")
        #expect(await s.service.wait { $0.count == expected.count })
        #expect(s.pushes == expected)
        second.signal(SIGTERM)
        #expect(await second.exitStatus() == 0)
    }

    /// Holds: a data directory that turns read-only at run time is reported (what and where) while pushes go on and
    /// the end is delivered; read-only at start-up, LiveBridge refuses to start with the reason.
    @Test func aReadOnlyDataDirectory() async throws {
        let s = try await Setup()
        defer { s.simulator.stop() }
        let livebridge = try await s.runStarted()
        try ReadOnly.set(s.data, true)
        defer { try? ReadOnly.set(s.data, false) }
        await s.simulator.setState("sensor.washer_status", "idle")
        #expect(await s.service.wait { $0.count == 2 })
        #expect(s.pushes == ["ONGOING 0.0", "IDLE 0.0"])
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("cannot save delivery state") && $0.contains(s.data) } })
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)

        let refused = try s.run()
        #expect(await refused.exitStatus() == 1)
        #expect(refused.stderr.lines.contains { $0.contains("the data directory \(s.data) is not writable") })
    }

    /// Read-only for everyone, root included: `chattr +i` as root (permission bits do not stop root), chmod otherwise.
    enum ReadOnly {
        struct Failed: Error, CustomStringConvertible { let description: String }

        static func set(_ path: String, _ readOnly: Bool) throws {
            if getuid() != 0 {
                guard chmod(path, readOnly ? 0o555 : 0o755) == 0 else { throw Failed(description: "chmod \(path): errno \(errno)") }
                return
            }
            guard try ChildProcess.run("/usr/bin/chattr", [readOnly ? "+i" : "-i", path]).status == 0 else {
                throw Failed(description: "chattr \(readOnly ? "+i" : "-i") \(path) failed: this case needs a file system with the immutable flag (ext4, xfs)")
            }
        }
    }
}
