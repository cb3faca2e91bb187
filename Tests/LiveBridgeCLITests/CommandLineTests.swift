import ProcessMeasurement
import Foundation
import Testing
import WebSocketTransport

/// The command line itself: help for every command without starting it, the version, exit statuses 0 / 1 / 2.
@Suite(.timeLimit(.minutes(1)))
struct CommandLineTests {
    static let commands = ["run", "demo", "preview-server", "watch", "check", "render", "template", "send", "preview", "blueprint", "simulator"]
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `demo -h` used to start the demo, `check -h` to read a file named "-h".
    @Test(arguments: commands)
    func helpOfEveryCommandGoesToStdoutAndStartsNothing(command: String) async throws {
        for flag in ["-h", "--help"] {
            let shown = try Subprocess([command, flag])
            #expect(await shown.exitStatus() == 0, "\(command) \(flag) did not exit at once")
            #expect(shown.stdout.lines.first?.hasPrefix("usage: livebridge \(command)") == true, "\(shown.stdout.lines)")
            #expect(shown.stderr.lines.isEmpty)
        }
        let help = try Subprocess(["help", command])
        #expect(await help.exitStatus() == 0)
        #expect(help.stdout.lines.first?.hasPrefix("usage: livebridge \(command)") == true)
    }

    @Test func helpAfterOtherArgumentsStillWins() async throws {
        let check = try Subprocess(["check", "missing.yaml", "-h"])
        #expect(await check.exitStatus() == 0)
        #expect(check.stdout.lines.first == "usage: livebridge check [--verbose] [--url URL [--token-file FILE]] CONFIG")
    }

    @Test func theVersionIsTheAddOnsVersion() async throws {
        let version = try Subprocess(["--version"])
        #expect(await version.exitStatus() == 0)
        let addon = try String(contentsOf: Self.repository.appendingPathComponent("config/homeassistant-addon/config.yaml"), encoding: .utf8)
        let line = try #require(addon.split(separator: "\n").first { $0.hasPrefix("version:") })
        let expected = line.dropFirst("version:".count).trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        #expect(version.stdout.lines == ["livebridge \(expected)"])
    }

    @Test(arguments: [
        (["frobnicate"], Int32(2), "livebridge: unknown command \"frobnicate\""),
        (["chek", "x.yaml"], 2, "livebridge: unknown command \"chek\" (did you mean \"check\"?)"),
        (["check"], 2, "livebridge check: name one rules file"),
        (["check", "--strict", "x.yaml"], 2, "livebridge check: unknown option --strict"),
        (["check", "-v", "x.yaml"], 2, "livebridge check: unknown option -v"),
        // With neither --states nor --url, render reads the rules file first (its Home Assistant is where the states come from).
        (["render", "x.yaml"], 1, "x.yaml:1:1: cannot read x.yaml: No such file or directory"),
        (["help", "nothing"], 2, "livebridge: unknown command \"nothing\""),
        ([], 2, "usage: livebridge <command> [options]"),
        (["run", "--config", "x.yaml", "--shutdown-deadline", "soon"], 2,
         "livebridge run: --shutdown-deadline \"soon\" is not a number of seconds above 0 and at most 300 (e.g. 5)"),
        (["run", "--config", "x.yaml", "--shutdown-deadline", "nan"], 2,
         "livebridge run: --shutdown-deadline \"nan\" is not a number of seconds above 0 and at most 300 (e.g. 5)"),
        (["check", "/nonexistent/livebridge.yaml"], 1, "/nonexistent/livebridge.yaml:1:1: cannot read /nonexistent/livebridge.yaml: No such file or directory"),
    ])
    func exitStatuses(arguments: [String], status: Int32, firstLine: String) async throws {
        let command = try Subprocess(arguments)
        #expect(await command.exitStatus() == status)
        #expect(command.stderr.lines.first == firstLine, "\(command.stderr.lines)")
    }

    /// A secrets file the service's user cannot read (the systemd unit's old advice) is said to be so, with the
    /// system's reason. As root (CI) the check runs as nobody; otherwise the file is made unreadable to us.
    @Test func checkSaysPermissionDeniedForAnUnreadableSecretsFile() async throws {
        // In /tmp itself: nobody must reach the folder, and the tests' temporary folder (TMPDIR, in the build folder)
        // may lie under one only its owner can enter (a checkout in /root).
        let folder = "/tmp/livebridge-cli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "homeassistant: { url: ws://ha.local:8123, token: !secret ha_token }\nbackends: { aivi: { type: aivi, token: t } }\n"
            .write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        try "ha_token: llat-never-shown\n".write(toFile: folder + "/secrets.yaml", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)
        try FileManager.default.setAttributes([.posixPermissions: getuid() == 0 ? 0o600 : 0o000], ofItemAtPath: folder + "/secrets.yaml")
        let check = getuid() == 0
            ? try Subprocess(["check", folder + "/rules.yaml"], asNobody: true)
            : try Subprocess(["check", folder + "/rules.yaml"])
        #expect(await check.exitStatus() == 1)
        #expect(check.stderr.lines.contains("\(folder)/secrets.yaml:1:1: cannot read \(folder)/secrets.yaml: Permission denied"))
        #expect(!check.stderr.lines.contains { $0.contains("is not defined") || $0.contains("llat-never-shown") })
    }

    /// `check` says OK only for a file `run` will run.
    @Test func checkRefusesAFileRunWouldRefuse() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            backends: { aivi: { type: aivi, token: t } }
            activities:
              clock: { active_when: "{{ true }}", template: generic, progress: 0.5 }
            """.write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        let expected = "\(folder)/rules.yaml:1:1: homeassistant: is required to run (url and token; as a Home Assistant add-on, "
            + "$SUPERVISOR_TOKEN stands for both); render and preview work without it"
        let check = try Subprocess(["check", folder + "/rules.yaml"])
        #expect(await check.exitStatus() == 1)
        #expect(check.stderr.lines == [expected, "1 error"])
        let run = try Subprocess(["run", "--config", folder + "/rules.yaml", "--data-dir", folder])
        #expect(await run.exitStatus() == 1)
        #expect(run.stderr.lines == ["livebridge run: " + expected])
        // As an add-on the same file runs: the Supervisor's token stands in, and check says so (never the token).
        let addOn = try Subprocess(["check", folder + "/rules.yaml"], environment: ["SUPERVISOR_TOKEN": "sv-secret-4711"])
        #expect(await addOn.exitStatus() == 0)
        #expect(addOn.stdout.lines == [
            "\(folder)/rules.yaml: OK — 1 activity, 0 entities, 1 backend (1 in use)",
            "Home Assistant: ws://supervisor/core/websocket, through the Supervisor with the add-on's token ($SUPERVISOR_TOKEN)",
        ])
        #expect(!(addOn.stdout.lines + addOn.stderr.lines).joined().contains("sv-secret-4711"))
    }
}

/// A Home Assistant that cannot be reached is said at once, with the address and why, not after a 15–20 s timeout.
struct UnreachableHomeAssistantTests {
    @Test(arguments: [["suggest"], ["template", "{{ area_name('sensor.x') }}", "--states", "STATES"], ["render", "RULES", "--states", "STATES"]])
    func aClosedPortIsRefusedAtOnce(command: [String]) async throws {
        let refusing = RefusingPort()  // nothing listens there, and nothing is given the port while the test runs
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let token = try temporaryFile("token")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: token)
        let states = try temporaryFile("[]", suffix: ".json")
        let rules = try temporaryFile("""
            homeassistant: { url: "ws://127.0.0.1:\(port)", token: t }
            backends: { aivi: { type: aivi, token: t } }
            activities:
              a: { active_when: "{{ true }}", template: generic, progress: 0.5, state: "{{ area_name('sensor.x') }}" }
            """, suffix: ".yaml")
        let arguments = command.map { $0 == "STATES" ? states : $0 == "RULES" ? rules : $0 } + ["--url", "http://127.0.0.1:\(port)", "--token-file", token]
        let run = try Subprocess(arguments)
        #expect(await run.exitStatus() != 0)
        // The cause, not "no result for get_states in time": the probe answered before any timeout could.
        let said = run.stderr.lines.joined(separator: "\n") + run.stdout.lines.joined(separator: "\n")
        #expect(said.contains("127.0.0.1:\(port): connection refused: nothing listens there"), "\(said)")
    }
}
