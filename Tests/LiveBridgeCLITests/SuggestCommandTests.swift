import Foundation
import HomeAssistantSimulator
import JSON
import Testing

/// `livebridge suggest` and `render --url` against the simulator's household, as a subprocess.
@Suite(.timeLimit(.minutes(1)))
struct SuggestCommandTests {
    static let token = "llat-suggest-test-77a"

    func household() async throws -> HomeAssistantSimulator {
        let simulator = try HomeAssistantSimulator(token: Self.token)
        let household = HouseholdScript(simulator: simulator, cycle: 0.05)
        await household.placeInRegistries()
        await household.runCycle()
        return simulator
    }

    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-suggest-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aProposalForTheHouseholdPassesCheck() async throws {
        let simulator = try await household()
        defer { simulator.stop() }
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tokenFile = try temporaryFile(Self.token)
        chmod(tokenFile, 0o600)
        let suggest = try Subprocess(["suggest", "--url", simulator.url, "--token-file", tokenFile, "--output", dir + "/livebridge.yaml"])
        #expect(await suggest.exitStatus() == 0)
        #expect(suggest.stderr.lines.first == "livebridge suggest: 8 entities, 4 recognised: laundry (timer), robo (robot vacuum), car (EV charging), washer (washing machine)")
        #expect(suggest.stderr.lines.last == "livebridge suggest: wrote \(dir)/livebridge.yaml: OK — 4 activities; next: read it, put your tokens in "
                + "secrets.yaml, delete its first line, then livebridge check, render, run")
        let proposal = try String(contentsOfFile: dir + "/livebridge.yaml", encoding: .utf8)
        #expect(proposal.contains("  # EV charging \"Car\" in Garage: binary_sensor.ev_charging, sensor.ev_battery, sensor.ev_minutes_left\n  car:\n"))
        #expect(proposal.contains("  # Washing machine \"Washer\" in Laundry room: sensor.washer_status, sensor.washer_progress\n  washer:\n"))
        #expect(proposal.contains("  # Robot vacuum \"Robo\" in Living room: vacuum.robo\n"))
        let secrets = try String(contentsOfFile: dir + "/secrets.yaml", encoding: .utf8)
        #expect(secrets.contains("ha_token: \"\(Self.token)\"") && secrets.contains("aivi_token: \"replace-with-your-aivi-token\""))
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/secrets.yaml")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!suggest.stderr.lines.joined().contains(Self.token), "the token is written to secrets.yaml only, never shown")
        // Not run, not passed by check, until the user has read it (deleted the mark) and given a real token.
        let unread = try Subprocess(["check", dir + "/livebridge.yaml"])
        #expect(await unread.exitStatus() == 1)
        #expect(unread.stderr.lines.first == "\(dir)/livebridge.yaml:1:1: this is livebridge suggest's proposal, not yet read: check its activities "
                + "and backends, then delete this line")
        try proposal.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            .write(toFile: dir + "/livebridge.yaml", atomically: true, encoding: .utf8)
        let placeholder = try Subprocess(["check", dir + "/livebridge.yaml"])
        #expect(await placeholder.exitStatus() == 1)
        #expect(placeholder.stderr.lines.first?.hasSuffix(": backends.aivi.token: still holds livebridge suggest's placeholder (replace-with-your-…): "
                + "put the real token in secrets.yaml") == true, "\(placeholder.stderr.lines)")
        try secrets.replacingOccurrences(of: "replace-with-your-aivi-token", with: "aivi-real-token")
            .write(toFile: dir + "/secrets.yaml", atomically: true, encoding: .utf8)
        let check = try Subprocess(["check", dir + "/livebridge.yaml"])
        #expect(await check.exitStatus() == 0)
        #expect(check.stdout.lines.first == "\(dir)/livebridge.yaml: OK — 4 activities, 7 entities, 1 backend (1 in use)")
        // Written once: a second run does not replace the file.
        let again = try Subprocess(["suggest", "--url", simulator.url, "--token-file", tokenFile, "--output", dir + "/livebridge.yaml"])
        #expect(await again.exitStatus() == 1)
        #expect(again.stderr.lines.last == "livebridge suggest: \(dir)/livebridge.yaml exists; give --force to replace it, or another --output")
    }

    /// A token that is not an administrator's cannot read the registries: the proposal comes from the states alone.
    @Test func registriesRefusedLeaveNamesFromTheStates() async throws {
        let simulator = try await household()
        defer { simulator.stop() }
        await simulator.setRegistriesRefused(true)
        let tokenFile = try temporaryFile(Self.token)
        chmod(tokenFile, 0o600)
        let suggest = try Subprocess(["suggest", "--url", simulator.url, "--token-file", tokenFile])
        #expect(await suggest.exitStatus() == 0)
        #expect(suggest.stderr.lines == [
            "livebridge suggest: Home Assistant gave no registries (Home Assistant error unauthorized: Unauthorized): names from friendly names, no areas",
            "livebridge suggest: 8 entities, 4 recognised: laundry (timer), robo (robot vacuum), ev (EV charging), washer (washing machine)",
        ])
        #expect(suggest.stdout.lines.contains("  # Washing machine \"Washer\": sensor.washer_status, sensor.washer_progress"))
    }

    @Test func aRejectedTokenSaysSo() async throws {
        let simulator = try await household()
        defer { simulator.stop() }
        let suggest = try Subprocess(["suggest", "--url", simulator.url, "--token-file", try temporaryFile("wrong-token")])
        #expect(await suggest.exitStatus() == 1)
        #expect(suggest.stderr.lines.last == "livebridge suggest: Home Assistant at \(simulator.url) rejected the access token")
    }

    /// `render` with neither --states nor --url reads the Home Assistant its rules file names, with its token, and
    /// warns about an entity Home Assistant lacks, as `run` does.
    @Test func renderReadsTheRulesFilesOwnHomeAssistant() async throws {
        let simulator = try await household()
        defer { simulator.stop() }
        await simulator.setState("sensor.washer_status", "running")
        await simulator.setState("sensor.washer_progress", "40", attributes: ["unit_of_measurement": "%"])
        let rules = try temporaryFile("""
            homeassistant: { url: \(simulator.url), token: \(Self.token) }
            backends: { aivi: { type: aivi, token: t } }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer_status', 'running') }}"
                template: progress
                header_left: "{{ states('sensor.washr_typo') }}"
                progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}" }
            """, suffix: ".yaml")
        let render = try Subprocess(["render", rules, "--phase", "update"])
        #expect(await render.exitStatus() == 0, "\(render.stderr.lines)")
        let body = try JSONParser.parse(render.stdout.lines.first { $0.hasPrefix("{") } ?? "null")
        #expect(body["content"]?["progress"]?["value"] == 0.4)
        #expect(render.stderr.lines.contains { $0.contains("sensor.washr_typo is not an entity in Home Assistant") }, "\(render.stderr.lines)")
    }

    /// `render --url --token-file` without --states: the live states decide what is active and what it shows.
    @Test func renderUsesTheLiveStates() async throws {
        let simulator = try await household()
        defer { simulator.stop() }
        await simulator.setState("sensor.washer_status", "running")
        await simulator.setState("sensor.washer_progress", "40", attributes: ["unit_of_measurement": "%"])
        let rules = try temporaryFile("""
            homeassistant: { url: \(simulator.url), token: unused }
            backends: { aivi: { type: aivi, token: t } }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer_status', 'running') }}"
                template: progress
                header_left: Washing
                progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}" }
            """, suffix: ".yaml")
        let render = try Subprocess(["render", rules, "--url", simulator.url, "--token-file", try temporaryFile(Self.token), "--phase", "update"])
        #expect(await render.exitStatus() == 0)
        #expect(Array(render.stdout.lines.prefix(2)) == ["washer: active, update → aivi (aivi)", "PATCH https://api.getaivi.app/activity/washer"])
        let body = try JSONParser.parse(render.stdout.lines.first { $0.hasPrefix("{") } ?? "null")
        #expect(body["content"]?["progress"]?["value"] == 0.4)
    }
}
