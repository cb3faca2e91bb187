import ProcessMeasurement
import FakePushServices
import Foundation
import HomeAssistantSimulator
import Testing
import WebSocketTransport
import JSON

/// The restart grace against reloads, at the daemon (from an independent review's attack; each failed before its mend).
@Suite(.timeLimit(.minutes(1)))
struct ReloadGraceDaemonTests {
    static let dryer = """
      dryer:
        active_when: "{{ is_state('sensor.dryer_status', 'running') }}"
        template: generic
        progress: 0.5
    """

    /// The washer started and the first connection's grace over: the daemon, its simulator, backend and folder, and
    /// its rules with `more` activities (to write for a reload).
    func started(source: String, grace: String) async throws
        -> (HomeAssistantSimulator, FakePushService, String, Subprocess, (String) -> String) {
        let simulator = try HomeAssistantSimulator(token: "ha-grace-token")
        let service = try FakePushService()
        let activeWhen = "{{ is_state('sensor.washer_status', 'running') }}"
        let rules = { (more: String) in
            RestartGraceDaemonTests.rules(simulator, service, activeWhen: activeWhen, more: more)
                .replacingOccurrences(of: "restart_grace: 4s", with: "restart_grace: \(grace), entity_source: \(source)")
        }
        let folder = try RestartGraceDaemonTests.rulesFolder(simulator, service, activeWhen: activeWhen)
        try rules("").write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        await simulator.setState("sensor.washer_status", "running")
        await simulator.setState("sensor.dryer_status", "idle")
        let daemon = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data"])
        #expect(await service.wait { $0.count == 1 })
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(Self.graceOver) } })
        return (simulator, service, folder, daemon, rules)
    }

    static let graceOver = #"msg="restart grace over""#

    /// Home Assistant restarts; the washer's sensor is unavailable and the washer is held in the grace. A reload
    /// (SIGHUP) then, adding an activity: the washer must stay held until the grace is over, not end at the reload.
    @Test(arguments: ["subscribe_entities", "state_changed"])
    func aReloadDuringTheGraceEndsNothingHeld(source: String) async throws {
        let (simulator, service, folder, daemon, rules) = try await started(source: source, grace: "6s")
        defer { simulator.stop(); try? FileManager.default.removeItem(atPath: folder) }

        await simulator.restart(coreState: "RUNNING")
        await simulator.setState("sensor.washer_status", "unavailable")
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg="held in the restart grace""#) && $0.contains("activities=washer") } })
        try rules(Self.dryer).write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg=reloaded"#) } })
        // Back within the grace: kept. Ended by the reload, it would have started again.
        await simulator.setState("sensor.washer_status", "running")
        #expect(await daemon.stderr.wait { $0.filter { $0.contains(Self.graceOver) }.count == 2 })
        let states = service.requests.map { $0.body?["state"]?.stringValue ?? "?" }
        #expect(!states.contains("IDLE") && states.filter { $0 == "ONGOING" }.count == states.count, "the held washer ended at the reload: \(states)")
        #expect(daemon.stderr.lines.last { $0.contains(Self.graceOver) }?.hasSuffix(#"ended="" kept=washer"#) == true)
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }

    /// With entity_source: state_changed, a reload's new selection (get_states again on the same socket) begins no
    /// grace either: the washer going unavailable just after ends it at once.
    @Test func aReloadsNewSelectionBeginsNoGraceWithStateChanged() async throws {
        let (simulator, service, folder, daemon, rules) = try await started(source: "state_changed", grace: "4s")
        defer { simulator.stop(); try? FileManager.default.removeItem(atPath: folder) }
        try rules(Self.dryer).write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg=reloaded"#) } })
        #expect(await simulator.wait { $0.commands(ofType: "get_states").count >= 2 })
        await simulator.setState("sensor.washer_status", "unavailable")
        #expect(await service.wait { $0.last?.body?["state"] == "IDLE" })
        #expect(!daemon.stderr.lines.contains { $0.contains("held in the restart grace") }, "\(daemon.stderr.lines)")
        // And a reconnection's first get_states does begin one.
        await simulator.setState("sensor.washer_status", "running")
        #expect(await service.wait { $0.last?.body?["state"] == "ONGOING" })
        await simulator.restart(coreState: "RUNNING")
        await simulator.setState("sensor.washer_status", "unavailable")
        #expect(await daemon.stderr.wait { $0.contains { $0.contains(#"msg="held in the restart grace""#) } })
        daemon.signal(SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }
}
