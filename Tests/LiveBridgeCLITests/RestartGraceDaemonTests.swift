import ProcessMeasurement
import FakePushServices
import Foundation
import HomeAssistantSimulator
import Testing
import WebSocketTransport
import JSON

/// `livebridge run` while Home Assistant restarts mid-activity and comes back with the washer's sensor unavailable:
/// within `restart_grace` nothing ends; past it, a condition still false ends the activity. The grace is 4 s: the
/// test's changes must reach the daemon within it, and under ThreadSanitizer beside every suite 1.5 s was once not
/// enough.
@Suite(.timeLimit(.minutes(1)))
struct RestartGraceDaemonTests {
    /// A new folder with livebridge.yaml: a 4 s restart grace and the washer, active when `activeWhen`, showing its
    /// sensor's state (the caller removes the folder).
    static func rulesFolder(_ simulator: HomeAssistantSimulator, _ service: FakePushService, activeWhen: String) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-grace-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try rules(simulator, service, activeWhen: activeWhen).write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        return folder
    }

    /// The rules: `more` activities after the washer.
    static func rules(_ simulator: HomeAssistantSimulator, _ service: FakePushService, activeWhen: String, more: String = "") -> String {
        """
        homeassistant: { url: "\(simulator.url)", token: ha-grace-token, restart_grace: 4s }
        backends:
          aivi: { type: aivi, token: aivi-test-token, base_url: \(service.baseURL) }
        defaults: { backend: aivi, debounce: 0s, max_wait: 1s, min_interval: 0s }
        activities:
          washer:
            active_when: "\(activeWhen)"
            template: generic
            state: "{{ states('sensor.washer_status') }}"
            progress: 0.5
        \(more)
        """
    }

    @Test func aRestartWithUnavailableStatesEndsNothingAndAnEdgeHeldPastTheGraceEnds() async throws {
        let simulator = try HomeAssistantSimulator(token: "ha-grace-token")
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = try Self.rulesFolder(simulator, service, activeWhen: "{{ is_state('sensor.washer_status', 'running') }}")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        await simulator.setState("sensor.washer_status", "running")
        let daemon = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data",
                                     "--status-listen", "127.0.0.1:0"])
        #expect(await service.wait { $0.count == 1 })

        let graceOver = #"msg="restart grace over""#
        // Past the first connection's grace; then Home Assistant restarts, and the washer's integration is not loaded
        // yet when LiveBridge takes the new snapshot.
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(graceOver) } })
        await simulator.restart(coreState: "RUNNING")
        await simulator.setState("sensor.washer_status", "unavailable")
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg="held in the restart grace""#) && $0.contains("activities=washer") } })
        await simulator.setState("sensor.washer_status", "running")
        #expect(await daemon.stderr.wait { $0.filter { $0.contains(graceOver) }.count == 2 })
        #expect(daemon.stderr.lines.last { $0.contains(graceOver) }?.hasSuffix(#"ended="" kept=washer"#) == true)
        #expect(service.requests.map { $0.body?["state"] } == ["ONGOING"], "no end, no update showing unavailable")

        // Again, and this time the washer stays unavailable past the grace: it ends.
        await simulator.restart(coreState: "RUNNING")
        await simulator.setState("sensor.washer_status", "unavailable")
        #expect(await daemon.stderr.wait { $0.filter { $0.contains(graceOver) }.count == 3 })
        #expect(daemon.stderr.lines.last { $0.contains(graceOver) }?.hasSuffix(#"ended=washer kept="""#) == true)
        #expect(await service.wait { $0.last?.body?["state"] == "IDLE" })
        #expect(service.requests.map { $0.body?["state"] } == ["ONGOING", "IDLE"])
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }

    /// A reload (SIGHUP) that reads another entity follows a new selection on the same socket: its snapshot is no
    /// reconnection, so no grace begins, and the washer going unavailable just after ends it at once.
    @Test func aReloadsNewSelectionBeginsNoGrace() async throws {
        let simulator = try HomeAssistantSimulator(token: "ha-grace-token")
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = try Self.rulesFolder(simulator, service, activeWhen: "{{ is_state('sensor.washer_status', 'running') }}")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        await simulator.setState("sensor.washer_status", "running")
        await simulator.setState("sensor.dryer_status", "idle")
        let daemon = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data"])
        #expect(await service.wait { $0.count == 1 })
        let graceOver = #"msg="restart grace over""#
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(graceOver) } })

        let dryer = """
          dryer:
            active_when: "{{ is_state('sensor.dryer_status', 'running') }}"
            template: generic
            progress: 0.5
        """
        try Self.rules(simulator, service, activeWhen: "{{ is_state('sensor.washer_status', 'running') }}", more: dryer)
            .write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg=reloaded"#) } })
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 2 })
        await simulator.setState("sensor.washer_status", "unavailable")
        #expect(await service.wait { $0.last?.body?["state"] == "IDLE" })
        #expect(!daemon.stderr.lines.contains { $0.contains("held in the restart grace") }, "\(daemon.stderr.lines)")
        #expect(daemon.stderr.lines.filter { $0.contains(graceOver) }.count == 1)
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }

    /// A condition only Home Assistant renders (an area's name) comes back false from a Home Assistant still starting,
    /// before its snapshot: the rendering waits for the snapshot and its grace, so nothing ends; true again within the
    /// grace, the activity is kept. (Before, the rendering was evaluated at once and ended the activity, grace or not.)
    @Test func aRenderingFromAStartingHomeAssistantWaitsForTheGrace() async throws {
        let simulator = try HomeAssistantSimulator(token: "ha-grace-token")
        defer { simulator.stop() }
        let service = try FakePushService()
        let condition = "{{ area_name('laundry') == 'Laundry' }}"
        let folder = try Self.rulesFolder(simulator, service, activeWhen: condition)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        await simulator.setState("sensor.washer_status", "running")
        await simulator.setRendering(condition, true)
        let daemon = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data"])
        #expect(await service.wait { $0.count == 1 })
        let graceOver = #"msg="restart grace over""#
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(graceOver) } })

        // Home Assistant restarts and is still starting when LiveBridge is back: the template is subscribed again at
        // once, and its rendering is false now; the entities come only once Home Assistant runs.
        await simulator.restart(coreState: "STARTING")
        #expect(await simulator.wait { $0.commands(ofType: "render_template").count == 2 })
        await simulator.setRendering(condition, false)
        await simulator.setCoreState("RUNNING")
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg="held in the restart grace""#) && $0.contains("activities=washer") } })
        await simulator.setRendering(condition, true)
        #expect(await daemon.stderr.wait { $0.filter { $0.contains(graceOver) }.count == 2 })
        #expect(daemon.stderr.lines.last { $0.contains(graceOver) }?.hasSuffix(#"ended="" kept=washer"#) == true)
        #expect(service.requests.map { $0.body?["state"] } == ["ONGOING"], "no end")
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }
}
