import Platform
import PreviewServer
import FoundationEssentials
import Glibc
import HomeAssistantSimulator
import LiveBridge
import JSON
import Dispatcher

/// `livebridge demo`: the whole thing with no Home Assistant and no phone — a simulated household, LiveBridge running
/// the bundled rules, and a preview backend whose page shows every activity live.
enum DemoCommand {
    static let help = """
        usage: livebridge demo [--port 8099] [--cycle SECONDS]

        Starts a simulated Home Assistant (a washer, a laundry timer, an EV, a robot vacuum and a backup job on a loop),
        runs LiveBridge with the bundled demo rules, and serves the preview page at http://127.0.0.1:PORT.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["port", "cycle"])
        guard let port = Int(args["port"] ?? "8099"), (0...65535).contains(port) else { throw UsageError("--port must be 0–65535") }
        guard let cycle = Double(args["cycle"] ?? "60"), cycle >= 5 else { throw UsageError("--cycle must be at least 5 seconds") }

        let simulator = try HomeAssistantSimulator(token: "demo-token")
        let preview = try PreviewServer(port: port)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-demo-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try DemoRules.text(homeAssistant: simulator.url, preview: preview.baseURL).write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)

        let logger = Logger(level: .info)
        var options = LiveBridgeService.Options(configPath: folder + "/livebridge.yaml", dataDirectory: folder + "/data")
        // Each budget decision on the page's log, naming its activity.
        options.onBudgetDecision = { decision in
            preview.note(["at": .double(Date().timeIntervalSince1970), "activity": .string("\(decision.activity) · \(decision.target)"),
                          "decision": .string(decision.what)])
        }
        let service = try LiveBridgeService(options: options, logger: logger)
        standardOutput("LiveBridge demo: open \(preview.baseURL) (Ctrl-C stops)\n"
                       + "The binary is \(CommandLine.arguments[0]); `make install` puts it on your PATH as livebridge.\n")
        // The household's script runs beside the service, until the service has shut down.
        let status: Int32 = await withTaskGroup(of: Void.self) { group in
            group.addTask { await HouseholdScript(simulator: simulator, cycle: cycle).runForever() }
            defer { group.cancelAll() }
            do {
                try await ServiceRunner.run(service, signals: UnixSignals([.terminate, .interrupt]))
                return 0
            } catch {
                return 1
            }
        }
        withExtendedLifetime((simulator, preview)) {}
        try? FileManager.default.removeItem(atPath: folder)
        return status
    }
}

/// The rules the demo runs: one activity per household device, across the push services (the washer also at
/// ActivitySmith, the EV also at PushWard).
enum DemoRules {
    static func text(homeAssistant: String, preview: String) -> String {
        """
        homeassistant:
          url: \(homeAssistant)
          token: demo-token
        backends:
          aivi: { type: aivi, token: demo, base_url: \(preview) }
          pulse: { type: islandpulse, token: demo, base_url: \(preview) }
          ward: { type: pushward, token: demo, base_url: \(preview) }
          smith: { type: activitysmith, token: demo, base_url: \(preview) }
        # The demo's household runs a cycle a minute, about sixty times a real one: Apple's 15 updates an hour become
        # 900, so the whole loop shows live; a hold (min_interval, a small move) is said on the page's log.
        defaults: { backend: aivi, debounce: 1s, max_wait: 5s, min_interval: 2s, max_updates_per_hour: 900 }
        activities:
          washer:
            backend: [aivi, smith]
            active_when: "{{ is_state('sensor.washer_status', 'running') }}"
            template: progress
            icon: auto
            entity: sensor.washer_status
            header_left: { value: Washing, text_color: blue }
            header_right: "{{ states('sensor.washer_progress') }}%"
            progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}", color: blue }
            compact_value: "{{ states('sensor.washer_progress') }}%"
            on_end: { header_left: { value: Done, text_color: green }, progress: { style: simple, value: 1, color: green } }
          laundry:
            active_when: "{{ is_state('timer.laundry', 'active') }}"
            template: progress
            icon: timer
            header_left: Laundry
            header_right: { value: "{{ state_attr('timer.laundry', 'finishes_at') }}", formatter: time_until }
            progress: { style: simple, value: 0, color: teal }
            compact_value: { value: "{{ state_attr('timer.laundry', 'finishes_at') }}", formatter: time_until }
          ev:
            backend: [aivi, ward]
            active_when: "{{ is_state('binary_sensor.ev_charging', 'on') }}"
            template: progress
            icon: bolt.car
            header_left: { value: "{{ states('sensor.ev_battery') }}%", text_color: green }
            header_right: "{{ states('sensor.ev_minutes_left') }} min left"
            progress:
              style: segmented
              value: "{{ states('sensor.ev_battery') | float(0) / 100 }}"
              display: layered
              segments:
                - { value: 0.8, fill_color: green, track_color: gray, label: Standard }
                - { value: 0.2, fill_color: green, track_color: gray, track_fill: hatched, label: Extended }
            footer_left: { value: Home charger, text_color: gray }
          vacuum:
            active_when: "{{ is_state('vacuum.robo', 'cleaning') }}"
            template: monitor
            icon: robotic.vacuum.and.ellipsis
            left_column:
              value: { value: "{{ state_attr('vacuum.robo', 'activity') }}", text_color: indigo }
              footer: "In {{ state_attr('vacuum.robo', 'room') }}"
            right_column:
              value: "{{ state_attr('vacuum.robo', 'cleaned_area') }} m²"
              footer: "Battery: {{ state_attr('vacuum.robo', 'battery_level') }}%"
            on_end: { left_column: { value: { value: Docked, text_color: green }, footer: Cleaning done } }
          backup:
            backend: pulse
            job_id: nightly-backup
            active_when: "{{ not is_state('sensor.backup_status', 'idle') and has_value('sensor.backup_status') }}"
            template: progress
            status: "{{ 'success' if is_state('sensor.backup_status', 'done') else 'running' }}"
            message: "{{ state_attr('sensor.backup_status', 'step_name') }}"
            metric: "Step {{ state_attr('sensor.backup_status', 'step') }}/5"
            progress: "{{ state_attr('sensor.backup_status', 'step') | float(0) / 5 }}"
            accentColor: "#00CFFF"
        """
    }
}
