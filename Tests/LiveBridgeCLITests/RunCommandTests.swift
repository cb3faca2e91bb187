import ProcessMeasurement
import FakePushServices
import Foundation
import HTTPClient
import WebSocketTransport
import HomeAssistantSimulator
import JSON
import Testing

/// `livebridge run` as a subprocess between the Home Assistant simulator and the fake push services.
@Suite(.timeLimit(.minutes(1)))
struct RunCommandTests {
    static let token = "llat-run-test-31d"

    func rules(simulator: HomeAssistantSimulator, service: FakePushService, debounce: String = "50ms", statusPort: Int? = nil) -> String {
        (statusPort.map { "status: { listen: 127.0.0.1:\($0) }\n" } ?? "") + """
        homeassistant:
          url: \(simulator.url)
          token: !secret ha_token
        backends:
          aivi: { type: aivi, token: aivi-test-token, base_url: \(service.baseURL) }
        defaults: { backend: aivi, debounce: \(debounce), max_wait: 10s, min_interval: 100ms }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer_status', 'running') }}"
            template: progress
            progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}" }
            header_left: Washing
            on_end: { header_left: Done }
        """
    }

    struct Setup {
        let simulator: HomeAssistantSimulator
        let service: FakePushService
        let folder: String
        var config: String { folder + "/livebridge.yaml" }
    }

    func setup(debounce: String = "50ms", statusPort: Int? = nil, token: String = token) throws -> Setup {
        let simulator = try HomeAssistantSimulator(token: token)
        let service = try FakePushService()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-run-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try rules(simulator: simulator, service: service, debounce: debounce, statusPort: statusPort).write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        try "ha_token: \(Self.token)\n".write(toFile: folder + "/secrets.yaml", atomically: true, encoding: .utf8)
        return Setup(simulator: simulator, service: service, folder: folder)
    }

    func run(_ setup: Setup, logLevel: String = "info", extra: [String] = []) throws -> Subprocess {
        try Subprocess(["run", "--config", setup.config, "--data-dir", setup.folder + "/data", "--log-level", logLevel] + extra)
    }

    /// A Home Assistant nothing listens for: run says why beside the connection's own failure (issue 33), not only
    /// "could not start connecting".
    @Test func runSaysWhyHomeAssistantCannotBeReached() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-run-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        let refusing = RefusingPort()  // Home Assistant's address: nothing listens, and nothing is given it meanwhile
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        try """
            homeassistant: { url: "ws://127.0.0.1:\(port)", token: t }
            backends: { aivi: { type: aivi, token: t, base_url: "http://127.0.0.1:9" } }
            activities:
              a: { active_when: "{{ true }}", template: generic, progress: 0.5, state: x }
            """.write(toFile: folder + "/livebridge.yaml", atomically: true, encoding: .utf8)
        let livebridge = try Subprocess(["run", "--config", folder + "/livebridge.yaml", "--data-dir", folder + "/data", "--status-listen", "127.0.0.1:0"])
        let said = await livebridge.stderr.wait(timeout: .seconds(30)) { lines in
            lines.contains { $0.contains("cannot be reached: 127.0.0.1:\(port): connection refused") }
        }
        livebridge.signal(SIGTERM)
        _ = await livebridge.exitStatus()
        #expect(said, "\(livebridge.stdout.lines.suffix(5)) \(livebridge.stderr.lines.suffix(5))")
    }

    func labels(_ service: FakePushService) -> [String] {
        service.requests.map { request in
            let state = request.body?["state"]?.stringValue ?? "?"
            let header = request.body?["content"]?["header_left"]?["value"]?.stringValue ?? "?"
            let value = request.body?["content"]?["progress"]?["value"]?.doubleValue.map { String($0) } ?? "?"
            return "\(state) \(header) \(value)"
        }
    }

    @Test func aWasherCycleGivesStartTheUpdatesAndEnd() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        await s.simulator.setState("sensor.washer_status", "idle")
        await s.simulator.setState("sensor.washer_progress", "0")
        let livebridge = try run(s)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("msg=\"ready: 2 entities in the snapshot\"") } })
        await s.simulator.setState("sensor.washer_status", "running")
        #expect(await s.service.wait { $0.count == 1 })
        await s.simulator.setState("sensor.washer_progress", "50")
        #expect(await s.service.wait { $0.count == 2 })
        await s.simulator.setState("sensor.washer_progress", "100")
        #expect(await s.service.wait { $0.count == 3 })
        await s.simulator.setState("sensor.washer_status", "idle")
        #expect(await s.service.wait { $0.count == 4 })
        #expect(labels(s.service) == ["ONGOING Washing 0.0", "ONGOING Washing 0.5", "ONGOING Washing 1.0", "IDLE Done 1.0"])
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
        #expect(livebridge.stderr.lines.filter { $0.contains("msg=push") }.count == 4)
        #expect(!livebridge.stderr.lines.joined().contains(Self.token))
        #expect(!livebridge.stderr.lines.joined().contains("aivi-test-token"))
    }

    @Test func sigtermSendsTheDueUpdateBeforeExiting() async throws {
        let s = try setup(debounce: "30s")
        defer { s.simulator.stop() }
        await s.simulator.setState("sensor.washer_status", "running")
        await s.simulator.setState("sensor.washer_progress", "10")
        let livebridge = try run(s, logLevel: "debug")
        #expect(await s.service.wait { $0.count == 1 })
        await s.simulator.setState("sensor.washer_progress", "20")
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("msg=queued activity=washer target=aivi event=update") } })
        // The change is waiting out a 30 s debounce; SIGTERM sends it now.
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
        #expect(labels(s.service) == ["ONGOING Washing 0.1", "ONGOING Washing 0.2"])
    }

    @Test func sighupWithABrokenFileKeepsTheOldRulesRunning() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        await s.simulator.setState("sensor.washer_status", "running")
        let livebridge = try run(s)
        #expect(await s.service.wait { $0.count == 1 })
        try "activities:\n  washer:\n    template: progres\n".write(toFile: s.config, atomically: true, encoding: .utf8)
        livebridge.signal(SIGHUP)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("reload failed; the previous rules keep running") } })
        await s.simulator.setState("sensor.washer_progress", "70")
        #expect(await s.service.wait { $0.count == 2 })
        #expect(labels(s.service).last == "ONGOING Washing 0.7")
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }

    @Test func killedMidCycleItResumesWithoutASecondStartAndDeliversTheEnd() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        await s.simulator.setState("sensor.washer_status", "running")
        await s.simulator.setState("sensor.washer_progress", "30")
        let first = try run(s)
        #expect(await s.service.wait { $0.count == 1 })
        first.signal(SIGKILL)
        _ = await first.exitStatus()
        await s.simulator.setState("sensor.washer_status", "idle")
        let second = try run(s)
        #expect(await s.service.wait { $0.count == 2 })
        #expect(labels(s.service) == ["ONGOING Washing 0.3", "IDLE Done 0.3"])
        second.signal(SIGTERM)
        #expect(await second.exitStatus() == 0)
    }

    @Test func theStatusListenerAnswersHealthMetricsAndActivities() async throws {
        let s = try setup(statusPort: 0)
        defer { s.simulator.stop() }
        await s.simulator.setState("sensor.washer_progress", "10")
        await s.simulator.setState("sensor.washer_status", "running")
        let livebridge = try run(s)
        let port = try #require(await statusPort(of: livebridge), "\(livebridge.stderr.lines.joined(separator: "\n"))")
        #expect(await s.service.wait { $0.count == 1 })
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("msg=push activity=washer") } })
        let client = HTTPClient()
        let health = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz"))
        #expect(health.status == 200)
        #expect(health.bodyText == #"{"status":"ok"}"#)
        let metrics = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/metrics"))
        #expect(metrics.bodyText.contains("livebridge_pushes_total{backend=\"aivi\",target=\"aivi\",outcome=\"delivered\"} 1\n"))
        #expect(metrics.bodyText.contains("livebridge_push_latency_seconds_count 1\n"))
        #expect(metrics.bodyText.contains("livebridge_renders_total 1\n"))
        #expect(metrics.bodyText.contains("livebridge_backend_connections_opened_total 1\n"))
        let activities = try JSONParser.parse(try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/activities")).body)
        #expect(activities["activities"]?.arrayValue?.first?["phase"] == "running")
        #expect(activities["activities"]?.arrayValue?.first?["last_delivered"]?["state"] == "ONGOING")
        #expect(metrics.bodyText.contains("livebridge_frames_read_in_place_total 0\n"), "the snapshot is decoded whole")
        // A change after the snapshot comes in Home Assistant's layout and is applied where it arrived.
        await s.simulator.setState("sensor.washer_progress", "20")
        #expect(await s.service.wait { $0.count == 2 })
        let after = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/metrics")).bodyText
        let inPlace = after.split(separator: "\n").first { $0.hasPrefix("livebridge_frames_read_in_place_total ") }
        #expect(inPlace.flatMap { Int($0.split(separator: " ")[1]) } ?? 0 >= 1, "\(after)")
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }

    @Test func healthIsFailingWhenHomeAssistantRejectsTheToken() async throws {
        let s = try setup(statusPort: 0, token: "a-different-token")
        defer { s.simulator.stop() }
        let livebridge = try run(s)
        let port = try #require(await statusPort(of: livebridge), "\(livebridge.stderr.lines.joined(separator: "\n"))")
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("rejected the access token") } })
        let health = try await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz"))
        #expect(health.status == 503)
        #expect(health.bodyText == #"{"reasons":["Home Assistant rejected the access token"],"status":"failing"}"#)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 1)
    }

    @Test func blueprintEventsArePushedAndBadOnesBecomeOnePersistentNotification() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        let livebridge = try run(s)
        #expect(await s.simulator.wait { $0.commands(ofType: "subscribe_events").contains { $0.message["event_type"] == "livebridge_activity" } })
        await s.simulator.fireEvent("livebridge_activity", data: ["activity": "dryer", "action": "start", "backend": "aivi",
            "payload": ["template": "progress", "progress": ["style": "simple", "value": 0.3], "header_left": "Drying"]])
        #expect(await s.service.wait { $0.count == 1 })
        #expect(s.service.requests.first?.path == "/activity/dryer")
        #expect(s.service.requests.first?.body?["content"]?["header_left"] == ["value": "Drying"])

        let bad: JSONValue = ["activity": "dryer", "action": "update", "backend": "aivi",
                              "payload": ["template": "progress", "progress": ["style": "simple", "value": 0.5, "color": "grey"]]]
        await s.simulator.fireEvent("livebridge_activity", data: bad)
        await s.simulator.fireEvent("livebridge_activity", data: bad)
        #expect(await s.simulator.wait { $0.serviceCalls.count >= 1 })
        let notification = try #require(s.simulator.record.serviceCalls.first)
        #expect(notification["domain"] == "persistent_notification" && notification["service"] == "create")
        #expect(notification["service_data"]?["message"] == "The livebridge_activity event for dryer was not sent: payload.progress.color unknown colour \"grey\" (did you mean \"gray\"?)")
        // A good event after the bad ones still goes through; the bad one was reported once.
        await s.simulator.fireEvent("livebridge_activity", data: ["activity": "dryer", "action": "IDLE", "backend": "aivi",
            "payload": ["template": "progress", "progress": ["style": "simple", "value": 1], "header_left": "Dry"]])
        #expect(await s.service.wait { $0.count == 2 })
        #expect(s.service.requests.last?.body?["state"] == "IDLE")
        #expect(s.simulator.record.serviceCalls.count == 1)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }


    @Test func anUnwritableDataDirectoryIsAClearErrorAtStartUp() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        try "x".write(toFile: s.folder + "/notadir", atomically: true, encoding: .utf8)
        let livebridge = try Subprocess(["run", "--config", s.config, "--data-dir", s.folder + "/notadir"])
        #expect(await livebridge.exitStatus() == 1)
        #expect(livebridge.stderr.lines == ["livebridge run: the data directory \(s.folder)/notadir is not a directory"])
    }
}

extension RunCommandTests {
    /// Used to abort with "double free detected"; now one line naming the address, exit 1.
    @Test func aStatusPortInUseIsAClearErrorAtStartUp() async throws {
        let busy = try FakePushService()
        let port = Int(busy.baseURL.split(separator: ":").last!)!
        let s = try setup(statusPort: port)
        defer { s.simulator.stop() }
        let livebridge = try run(s)
        #expect(await livebridge.exitStatus() == 1)
        #expect(livebridge.stderr.lines.last
                    == "livebridge run: status listener (status.listen): cannot listen on 127.0.0.1:\(port): already in use (another program, or another LiveBridge, has it)")
        #expect(!livebridge.stderr.lines.contains { $0.hasPrefix("libwebsockets:") }, "libwebsockets' own lines go through the logger")
        withExtendedLifetime(busy) {}
    }

    @Test(arguments: [["demo"], ["preview-server"], ["simulator"]])
    func aListeningCommandOnAPortInUseSaysSoAndExits1(command: [String]) async throws {
        let busy = try FakePushService()
        let port = Int(busy.baseURL.split(separator: ":").last!)!
        let livebridge = try Subprocess(command + ["--port", String(port)])
        #expect(await livebridge.exitStatus() == 1)
        #expect(livebridge.stderr.lines.last
                    == "livebridge \(command[0]): cannot listen on 127.0.0.1:\(port): already in use (another program, or another LiveBridge, has it)")
        withExtendedLifetime(busy) {}
    }
}

extension RunCommandTests {
    @Test func aSecondDaemonOnTheSameDataDirectoryIsRefused() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        let first = try run(s)
        #expect(await first.stderr.wait { $0.contains { $0.contains("msg=\"ready: ") } })
        let second = try run(s)
        #expect(await second.exitStatus() == 1)
        #expect(second.stderr.lines.last?.hasPrefix("livebridge run: another LiveBridge (pid ") == true, "\(second.stderr.lines)")
        #expect(second.stderr.lines.last?.hasSuffix("is running with the data directory \(s.folder)/data; stop it, or give this one its own --data-dir") == true)
        first.signal(SIGTERM)
        #expect(await first.exitStatus() == 0)
    }
}

extension RunCommandTests {
    /// An entity the rules read that Home Assistant lacks: one warning with a did-you-mean at ready, /healthz degraded.
    @Test func aMissingEntityIsWarnedAboutAndHealthIsDegraded() async throws {
        let s = try setup(statusPort: 0)
        defer { s.simulator.stop() }
        await s.simulator.setState("sensor.washer_status", "idle")
        await s.simulator.setState("sensor.washer_progres", "10")
        let livebridge = try run(s)
        let port = try #require(await statusPort(of: livebridge), "\(livebridge.stderr.lines.joined(separator: "\n"))")
        let warning = "level=warning msg=\"sensor.washer_progress is not an entity in Home Assistant (did you mean sensor.washer_progres?)\""
        #expect(await livebridge.stderr.wait { $0.contains { $0.hasSuffix(warning) } })
        let health = try await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz"))
        #expect(health.status == 200)
        #expect(health.bodyText == #"{"missing_entities":[{"did_you_mean":"sensor.washer_progres","entity_id":"sensor.washer_progress"}],"status":"degraded"}"#)
        #expect(livebridge.stderr.lines.filter { $0.contains("is not an entity") }.count == 1)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }
}

extension RunCommandTests {
    /// SIGHUP applies backends: and homeassistant: too (they used to be ignored while the log said "reloaded").
    @Test func sighupMovesToANewBackendAndANewHomeAssistant() async throws {
        let s = try setup()
        defer { s.simulator.stop() }
        let secondService = try FakePushService()
        let secondSimulator = try HomeAssistantSimulator(token: Self.token)
        defer { secondSimulator.stop() }
        await s.simulator.setState("sensor.washer_status", "running")
        await s.simulator.setState("sensor.washer_progress", "10")
        let livebridge = try run(s)
        #expect(await s.service.wait { $0.count == 1 })

        // The backend first: same activity, its next push goes to the new base_url.
        var text = rules(simulator: s.simulator, service: secondService)
        try text.write(toFile: s.config, atomically: true, encoding: .utf8)
        livebridge.signal(SIGHUP)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("msg=\"backends changed\" backends=aivi") } })
        await s.simulator.setState("sensor.washer_progress", "40")
        #expect(await secondService.wait { $0.count == 1 })
        #expect(s.service.requests.count == 1)

        // Then Home Assistant: a new URL reconnects, and its states drive the activity.
        await secondSimulator.setState("sensor.washer_status", "running")
        await secondSimulator.setState("sensor.washer_progress", "90")
        text = rules(simulator: secondSimulator, service: secondService)
        try text.write(toFile: s.config, atomically: true, encoding: .utf8)
        livebridge.signal(SIGHUP)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("msg=\"Home Assistant settings changed; reconnecting\"") } })
        #expect(await secondService.wait { requests in requests.contains { $0.body?["content"]?["progress"]?["value"] == .double(0.9) } })
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
    }
}

/// The port the daemon's status listener took, from its `status listener` line (text format, any host): the tests'
/// rules ask for port 0, a free one (a port found free beforehand was once taken by another test's connection before
/// the daemon listened on it, and the daemon exited). nil when the line did not come (the daemon ended first, say).
func statusPort(of output: Subprocess, timeout: Duration = .seconds(30)) async -> Int? {
    guard await output.stderr.wait(timeout: timeout, until: { $0.contains { statusListenerPort(in: $0) != nil } }) else { return nil }
    return output.stderr.lines.lazy.compactMap(statusListenerPort(in:)).first
}

/// The port of a `status listener url=http://HOST:PORT/healthz` line; nil for any other line.
@Sendable func statusListenerPort(in line: String) -> Int? {
    guard line.contains("msg=\"status listener\" url=http://"), let end = line.range(of: "/healthz", options: .backwards),
          let colon = line[..<end.lowerBound].lastIndex(of: ":") else { return nil }
    return Int(line[line.index(after: colon)..<end.lowerBound])
}
