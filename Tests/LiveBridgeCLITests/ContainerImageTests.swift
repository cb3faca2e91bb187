import ProcessMeasurement
import FakePushServices
import Foundation
import HTTPClient
import HomeAssistantSimulator
import JSON
import Testing
import WebSocketTransport

/// The built images run in Docker against the simulator and a fake Aivi on 127.0.0.1 (`--network host`): the add-on
/// as Supervisor starts it, the Home Assistant Container image as the README starts it. `make images` builds them and
/// names them in LIVEBRIDGE_ADDON_IMAGE and LIVEBRIDGE_CONTAINER_IMAGE; without those (make test) the suite is off.
@Suite(.enabled(if: ContainerImage.configured, "make images builds the images"), .serialized, .timeLimit(.minutes(5)))
struct ContainerImageTests {
    /// The add-on image: the Supervisor's options in /data/options.json, the add-on's folder at /config,
    /// SUPERVISOR_TOKEN set, the simulator standing in for supervisor/core/websocket.
    @Test func theAddonImageStartsAsSupervisorStartsItAndPushes() async throws {
        let image = try ContainerImage.addon
        let supervisorToken = "supervisor-token-c0ffee"
        let simulator = try HomeAssistantSimulator(token: supervisorToken)
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = try ContainerImage.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try ContainerImage.washerRules(service: service).write(toFile: folder + "/config/livebridge.yaml", atomically: true, encoding: .utf8)
        try #"{"rules": "/config/livebridge.yaml", "log_level": "info", "dry_run": false}"#
            .write(toFile: folder + "/data/options.json", atomically: true, encoding: .utf8)
        await simulator.setState("sensor.washer_status", "idle")
        await simulator.setState("sensor.washer_progress", "10")
        let container = try ContainerImage.run(image, options: [
            "-e", "SUPERVISOR_TOKEN", "-e", "LIVEBRIDGE_SUPERVISOR_HOST=127.0.0.1:\(simulator.port)",
            "-e", "LIVEBRIDGE_STATUS_LISTEN=127.0.0.1:0", "-v", "\(folder)/data:/data", "-v", "\(folder)/config:/config",
        ], environment: ["SUPERVISOR_TOKEN": supervisorToken])
        defer { container.remove() }
        let port = try #require(await statusPort(of: container.output, timeout: .seconds(60)), "\(container.output.stderr.lines.suffix(40).joined(separator: "\n"))")
        #expect(await container.output.stderr.wait(timeout: .seconds(60)) { $0.contains { $0.contains("msg=\"ready: 2 entities in the snapshot\"") } })
        #expect(container.output.stderr.lines.contains { $0.contains("through the Supervisor") })
        await simulator.setState("sensor.washer_status", "running")
        #expect(await service.wait { $0.count == 1 })
        #expect(service.requests.first?.body?["state"] == "ONGOING")
        let client = HTTPClient()
        #expect(try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz")).status == 200)
        let state = try JSONParser.parse(try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/api/state")).body)
        #expect(state["activities"]?["washer · aivi"]?["phase"] == "running")
        #expect(try ContainerImage.docker(["inspect", "-f", #"{{index .Config.Labels "io.hass.type"}}"#, image]) == "addon")
        #expect(!container.output.stderr.lines.joined().contains(supervisorToken), "the token never appears in the log")
        #expect(try container.stop() == 0)
    }

    /// The container image as the README runs it: as its own user (uid 10001) with a named volume on /data, the rules
    /// read-only on /config, TZ honoured by templates, its health check the binary itself.
    @Test func theContainerImageRunsAsItsOwnUserWithItsVolumeAndPushes() async throws {
        let image = try ContainerImage.container
        let simulator = try HomeAssistantSimulator(token: "ha-token-image")
        defer { simulator.stop() }
        let service = try FakePushService()
        let folder = try ContainerImage.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        homeassistant: { url: "ws://127.0.0.1:\(simulator.port)/api/websocket", token: !secret ha_token }
        \(ContainerImage.washerRules(service: service, headerRight: "{{ now().isoformat() }}"))
        """.write(toFile: folder + "/config/livebridge.yaml", atomically: true, encoding: .utf8)
        try "ha_token: ha-token-image\n".write(toFile: folder + "/config/secrets.yaml", atomically: true, encoding: .utf8)
        await simulator.setState("sensor.washer_status", "idle")
        await simulator.setState("sensor.washer_progress", "10")
        let volume = "livebridge-test-\(UUID().uuidString.prefix(8).lowercased())"
        _ = try ContainerImage.docker(["volume", "create", volume])
        defer { _ = try? ContainerImage.docker(["volume", "rm", volume]) }
        let container = try ContainerImage.run(image, options: [
            "-e", "TZ=Asia/Kolkata", "-v", "\(folder)/config:/config:ro", "-v", "\(volume):/data",
        ], arguments: ["run", "--config", "/config/livebridge.yaml", "--data-dir", "/data", "--status-listen", "127.0.0.1:0"])
        defer { container.remove() }
        let port = try #require(await statusPort(of: container.output, timeout: .seconds(60)), "\(container.output.stderr.lines.suffix(40).joined(separator: "\n"))")
        #expect(await container.output.stderr.wait(timeout: .seconds(60)) { $0.contains { $0.contains("msg=\"ready: 2 entities in the snapshot\"") } })
        await simulator.setState("sensor.washer_status", "running")
        #expect(await service.wait { $0.count == 1 })
        let content = service.requests.first?.body?["content"]
        guard case .string(let now)? = content?["header_right"]?["value"] else { Issue.record("no header_right in \(String(describing: content))"); return }
        #expect(now.hasSuffix("+05:30"), "now() in the container's TZ, not UTC: \(now)")
        #expect(try ContainerImage.docker(["exec", container.name, "id", "-u"]) == "10001")
        #expect(try ContainerImage.docker(["exec", container.name, "livebridge", "healthcheck", "--url", "http://127.0.0.1:\(port)/healthz"])
            .hasPrefix("200 {"))
        #expect(try ContainerImage.docker(["exec", container.name, "sh", "-c", "ls -A /data | wc -l"]) != "0", "state written to the volume")
        #expect(try ContainerImage.docker(["inspect", "-f", "{{json .Config.Healthcheck.Test}}", image])
            == #"["CMD","/usr/local/bin/livebridge","healthcheck"]"#)
        #expect(try container.stop() == 0)
    }

    /// The README's container quick start, step by step, as written: one network (the host's), as the user's own uid,
    /// the token read into a file, `suggest` writing the proposal into the mounted folder, the user's edits (the mark
    /// line deleted, the Aivi token put in; here also `base_url`, so it pushes to the fake), `check`, `render --url`,
    /// then the daemon detached with the folder read-only and its data beside it. The address is the host's IP as the
    /// README says (here 127.0.0.1, where the simulator listens).
    @Test func theReadmeQuickStartRunsStepByStep() async throws {
        let image = try ContainerImage.container
        let token = "ha-token-quickstart"
        let simulator = try HomeAssistantSimulator(token: token)
        defer { simulator.stop() }
        let household = HouseholdScript(simulator: simulator, cycle: 0.05)
        await household.placeInRegistries()
        await household.runCycle()
        let service = try FakePushService()
        let home = try ContainerImage.folder() + "/livebridge"
        defer { try? FileManager.default.removeItem(atPath: (home as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(atPath: home + "/data", withIntermediateDirectories: true)
        try token.write(toFile: home + "/token", atomically: true, encoding: .utf8)
        chmod(home + "/token", 0o600)
        let user = "\(getuid()):\(getgid())"
        // alias lb='docker run --rm --network host --user "$(id -u):$(id -g)" -v ~/livebridge:/config livebridge'
        func lb(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let run = try ChildProcess.run(ContainerImage.dockerPath,
                                           ["run", "--rm", "--network", "host", "--user", user, "-v", "\(home):/config", image] + arguments)
            return (run.status, String(decoding: run.output + run.errors, as: UTF8.self))
        }
        let url = "http://127.0.0.1:\(simulator.port)"
        let suggest = try lb(["suggest", "--url", url, "--token-file", "/config/token", "--output", "/config/livebridge.yaml"])
        #expect(suggest.status == 0, "\(suggest.output)")
        #expect(!suggest.output.contains(token), "the token is never shown")
        // The user's edits: the mark line deleted, the Aivi token in secrets.yaml (and, for the test, the fake's address).
        let proposal = try String(contentsOfFile: home + "/livebridge.yaml", encoding: .utf8)
        try proposal.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            .replacingOccurrences(of: "token: !secret aivi_token", with: "token: !secret aivi_token\n    base_url: \(service.baseURL)")
            .write(toFile: home + "/livebridge.yaml", atomically: true, encoding: .utf8)
        let secrets = try String(contentsOfFile: home + "/secrets.yaml", encoding: .utf8)
        try secrets.replacingOccurrences(of: "replace-with-your-aivi-token", with: "aivi-test-token")
            .write(toFile: home + "/secrets.yaml", atomically: true, encoding: .utf8)
        let check = try lb(["check", "/config/livebridge.yaml"])
        #expect(check.status == 0 && check.output.contains("OK"), "\(check.output)")
        let render = try lb(["render", "/config/livebridge.yaml", "--url", url, "--token-file", "/config/token"])
        #expect(render.status == 0 && render.output.contains("washer"), "\(render.output)")
        let container = try ContainerImage.run(image, options: [
            "--user", user, "-e", "TZ=Europe/Berlin", "-v", "\(home):/config:ro", "-v", "\(home)/data:/data",
        ], arguments: ["run", "--config", "/config/livebridge.yaml", "--data-dir", "/data", "--status-listen", "127.0.0.1:0"])
        defer { container.remove() }
        let port = try #require(await statusPort(of: container.output, timeout: .seconds(60)), "\(container.output.stderr.lines.suffix(40).joined(separator: "\n"))")
        #expect(await container.output.stderr.wait(timeout: .seconds(60)) { $0.contains { $0.contains("msg=\"ready:") } })
        await simulator.setState("sensor.washer_status", "running")
        #expect(await service.wait(timeout: .seconds(30)) { $0.contains { $0.path == "/activity/washer" } }, "the washer reaches the fake")
        #expect(try await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz")).status == 200)
        #expect(!container.output.stderr.lines.joined().contains(token))
        #expect(try container.stop() == 0)
    }

    /// What the runtime images hold: the binary, its three C libraries resolved, no toolchain or -dev package.
    @Test(arguments: [ContainerImage.addonName, ContainerImage.containerName])
    func theRuntimeImageHoldsTheBinaryAndItsThreeLibraries(variable: String) throws {
        let image = try ContainerImage.named(variable)
        let libraries = try ContainerImage.docker(["run", "--rm", "--entrypoint", "ldd", image, "/usr/local/bin/livebridge"])
        #expect(!libraries.contains("not found"), "\(libraries)")
        for library in ["libwebsockets.so.17", "libcurl.so.4", "libyaml-0.so.2"] { #expect(libraries.contains(library)) }
        let packages = try ContainerImage.docker(["run", "--rm", "--entrypoint", "dpkg-query", image, "-W", "-f", "${Package}\n"])
            .split(separator: "\n")
        #expect(packages.filter { $0.hasSuffix("-dev") || $0.hasPrefix("swift") || $0.hasPrefix("clang") } == [])
        for package in ["libwebsockets17", "libcurl4", "libyaml-0-2", "tzdata"] { #expect(packages.contains(Substring(package))) }
    }
}

/// Docker, the images `make images` built, and a container run in the foreground with its output collected.
enum ContainerImage {
    static let addonName = "LIVEBRIDGE_ADDON_IMAGE"
    static let containerName = "LIVEBRIDGE_CONTAINER_IMAGE"
    static var configured: Bool { ProcessInfo.processInfo.environment[addonName] != nil }
    static var addon: String { get throws { try named(addonName) } }
    static var container: String { get throws { try named(containerName) } }
    static var dockerPath: String { ProcessInfo.processInfo.environment["LIVEBRIDGE_DOCKER"] ?? "/usr/bin/docker" }

    static func named(_ variable: String) throws -> String {
        try #require(ProcessInfo.processInfo.environment[variable], "\(variable) names the image")
    }

    /// A temporary folder with config/ and data/, as Supervisor or the README lays them out.
    static func folder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-image-\(UUID().uuidString)").path
        for sub in ["/data", "/config"] { try FileManager.default.createDirectory(atPath: folder + sub, withIntermediateDirectories: true) }
        return folder
    }

    /// A washer on Aivi, pushing fast: the rules the add-on's and the container's tests run.
    static func washerRules(service: FakePushService, headerRight: String = "Now") -> String {
        """
        backends:
          aivi: { type: aivi, token: aivi-test-token, base_url: \(service.baseURL) }
        defaults: { backend: aivi, debounce: 50ms, max_wait: 10s, min_interval: 100ms }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer_status', 'running') }}"
            template: progress
            header_left: Washing
            header_right: "\(headerRight)"
            progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}" }
            on_end: { header_left: Done }
        """
    }

    /// `docker ARGS`: its standard output, trimmed; a failure says what docker said.
    static func docker(_ arguments: [String]) throws -> String {
        let run = try ChildProcess.run(dockerPath, arguments)
        try #require(run.status == 0, "docker \(arguments.joined(separator: " ")): \(String(decoding: run.errors, as: UTF8.self))")
        return String(decoding: run.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `docker run` in the foreground on the host's network, named so it can be stopped and removed.
    static func run(_ image: String, options: [String], arguments: [String] = [], environment: [String: String] = [:]) throws -> Running {
        let name = "livebridge-test-\(UUID().uuidString.prefix(8).lowercased())"
        let output = try Subprocess(["run", "--name", name, "--network", "host"] + options + [image] + arguments,
                                    environment: environment, program: dockerPath)
        return Running(name: name, output: output)
    }

    struct Running {
        let name: String
        let output: Subprocess

        /// `docker stop` (SIGTERM, as Supervisor and Docker stop it): the container's exit code.
        func stop() throws -> Int32? {
            _ = try ContainerImage.docker(["stop", "--time", "20", name])
            return Int32(try ContainerImage.docker(["inspect", "-f", "{{.State.ExitCode}}", name]))
        }

        func remove() { _ = try? ContainerImage.docker(["rm", "--force", name]) }
    }
}
