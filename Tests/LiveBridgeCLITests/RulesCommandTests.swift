import Foundation
import JSON
import Testing

/// `livebridge check` and `livebridge render` on the shipped example, as a user runs them.
@Suite(.timeLimit(.minutes(1)))
struct RulesCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The example rules with the example secrets beside them, in a fresh folder.
    func exampleFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-example-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let config = Self.repository.appendingPathComponent("config")
        try FileManager.default.copyItem(atPath: config.appendingPathComponent("livebridge.example.yaml").path, toPath: folder + "/livebridge.yaml")
        // The example's placeholder token replaced, as a user does first (check refuses a placeholder).
        try String(contentsOf: config.appendingPathComponent("secrets.example.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "replace-with-your-aivi-token", with: "aivi-token-of-the-user")
            .write(toFile: folder + "/secrets.yaml", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder + "/secrets.yaml")
        return folder
    }

    @Test func checkWarnsOfASecretsFileEveryUserCanRead() async throws {
        let folder = try exampleFolder()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/secrets.yaml")
        let check = try Subprocess(["check", folder + "/livebridge.yaml"])
        #expect(await check.exitStatus() == 0)
        #expect(check.stdout.lines.last == "warning: \(folder)/secrets.yaml holds secrets and is readable by every user of this machine (mode 644); "
                + "chmod 600 \(folder)/secrets.yaml")
    }

    @Test func checkSummarisesAValidFile() async throws {
        let folder = try exampleFolder()
        let check = try Subprocess(["check", folder + "/livebridge.yaml"])
        #expect(await check.exitStatus() == 0)
        #expect(check.stdout.lines == ["\(folder)/livebridge.yaml: OK — 7 activities, 14 entities, 3 backends (3 in use)"])
    }

    @Test func checkPrintsEveryErrorWithItsPositionAndExitsOne() async throws {
        let folder = try exampleFolder()
        let path = folder + "/livebridge.yaml"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "color: blue", with: "color: grey").replacingOccurrences(of: "    icon: bolt.car", with: "    icno: bolt.car")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let check = try Subprocess(["check", path])
        #expect(await check.exitStatus() == 1)
        let lines = check.stderr.lines
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("\(path):") && $0.contains(": activities.washer.progress.color: unknown colour \"grey\" (did you mean \"gray\"?)") })
        #expect(lines.contains { $0.contains("activities.ev.icno: unknown key \"icno\" (did you mean \"icon\"?)") })
        #expect(lines.last == "2 errors")
        #expect(!lines.joined().contains("eyJhbGciOiJIUzI1NiIs"))
    }

    @Test func renderPrintsTheExactRequestPerActivity() async throws {
        let folder = try exampleFolder()
        let render = try Subprocess(["render", folder + "/livebridge.yaml", "--states",
                                     Self.repository.appendingPathComponent("config/states.example.json").path,
                                     "--at", "2026-11-22T12:00:00Z", "--activity", "backup"])
        #expect(await render.exitStatus() == 0)
        // The exchange itself: method and URL, headers with the token masked, body.
        #expect(Array(render.stdout.lines.prefix(5)) == ["backup: active, start → pulse (islandpulse)", "POST https://api.islandpulse.dev/notify",
                                                         "Authorization: Bearer ****", "Content-Type: application/json", ""])
        let body = try JSONParser.parse(render.stdout.lines.first { $0.hasPrefix("{") } ?? "null")
        #expect(body == ["job_id": "database-migration", "action": "start", "layout": "progress", "status": "running",
                         "message": "Migrating users table…", "metric": "Step 2/5", "progress": 0.4, "accentColor": "#00CFFF"])
    }

    /// The shipped example renders as the README says before anyone has a token: render, preview and send --dry-run
    /// push nothing and need no secrets (placeholders, masked anyway); check and run still require them.
    @Test func theExampleRendersWithoutSecrets() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-nosecrets-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.repository.appendingPathComponent("config/livebridge.example.yaml").path, toPath: folder + "/livebridge.yaml")
        let states = Self.repository.appendingPathComponent("config/states.example.json").path
        let render = try Subprocess(["render", folder + "/livebridge.yaml", "--states", states, "--at", "2026-11-22T12:00:00Z"])
        #expect(await render.exitStatus() == 0, "\(render.stderr)")
        #expect(render.stdout.lines.contains("Authorization: Token ****"))
        #expect(!render.stderr.lines.joined().contains("secret"), "\(render.stderr.lines)")
        let dryRun = try Subprocess(["send", folder + "/livebridge.yaml", "--states", states, "--activity", "washer", "--action", "start", "--dry-run"])
        #expect(await dryRun.exitStatus() == 0, "\(dryRun.stderr)")
        let check = try Subprocess(["check", folder + "/livebridge.yaml"])
        #expect(await check.exitStatus() != 0)
        #expect(check.stderr.lines.joined().contains("!secret ha_token: no secrets file"))
    }

    /// check says which icons the preview has no drawing for (it shows their initial; the phone draws the symbol).
    @Test func checkNamesIconsThePreviewCannotDraw() async throws {
        let folder = try exampleFolder()
        try """
            homeassistant: { url: "ws://127.0.0.1:9", token: t }
            backends: { aivi: { type: aivi, token: t } }
            activities:
              drawn: { active_when: "{{ true }}", template: generic, progress: 0.5, state: x, icon: washer }
              undrawn: { active_when: "{{ true }}", template: generic, progress: 0.5, state: x, icon: figure.run }
            """.write(toFile: folder + "/icons.yaml", atomically: true, encoding: .utf8)
        let check = try Subprocess(["check", folder + "/icons.yaml"])
        #expect(await check.exitStatus() == 0)
        let notes = check.stdout.lines.filter { $0.contains("the preview has no drawing") }
        #expect(notes.count == 1 && notes[0].contains("activities.undrawn.icon") && notes[0].contains(":5:"), "\(check.stdout.lines)")
    }

    /// Local times follow TZ through the tz database (glibc), summer time included: no ICU in the binary.
    @Test(arguments: [("Europe/Berlin", "2026-11-22T12:00:00Z", "13:00 +0100"), ("Europe/Berlin", "2026-07-01T12:00:00Z", "14:00 +0200"),
                      ("America/New_York", "2026-11-22T12:00:00Z", "07:00 -0500"), ("UTC", "2026-07-01T12:00:00Z", "12:00 +0000")])
    func renderWritesLocalTimesInTheZoneOfTZ(zone: String, at: String, expected: String) async throws {
        let folder = try exampleFolder()
        try """
            homeassistant: { url: "ws://127.0.0.1:9", token: t }
            backends: { aivi: { type: aivi, token: t } }
            activities:
              clock:
                active_when: "{{ true }}"
                template: generic
                backend: aivi
                progress: 0.5
                state: "{{ now() | as_timestamp | timestamp_custom('%H:%M %z') }}"
            """.write(toFile: folder + "/clock.yaml", atomically: true, encoding: .utf8)
        try "[]".write(toFile: folder + "/states.json", atomically: true, encoding: .utf8)
        let render = try Subprocess(["render", folder + "/clock.yaml", "--states", folder + "/states.json", "--at", at], environment: ["TZ": zone])
        #expect(await render.exitStatus() == 0, "\(render.stderr)")
        let body = try JSONParser.parse(render.stdout.lines.first { $0.hasPrefix("{") } ?? "null")
        #expect(body["content"]?["state"] == .string(expected))
    }

    @Test func renderEndsWithTheOnEndFields() async throws {
        let folder = try exampleFolder()
        let render = try Subprocess(["render", folder + "/livebridge.yaml", "--states",
                                     Self.repository.appendingPathComponent("config/states.example.json").path,
                                     "--at", "2026-11-22T12:00:00Z", "--activity", "washer", "--phase", "end"])
        #expect(await render.exitStatus() == 0)
        let body = try JSONParser.parse(render.stdout.lines.first { $0.hasPrefix("{") } ?? "null")
        #expect(body["state"] == "IDLE")
        #expect(body["content"]?["header_left"] == ["value": "Done", "text_color": "green"])
    }

    /// render --phase end shows what run sends: when the on_end fields cannot render, the same fallback end.
    @Test func renderEndShowsTheFallbackRunWouldSend() async throws {
        let folder = try exampleFolder()
        try """
            homeassistant: { url: "ws://127.0.0.1:9", token: t }
            backends: { aivi: { type: aivi, token: t } }
            activities:
              washer:
                active_when: "{{ true }}"
                template: generic
                progress: 0.5
                state: Washing
                on_end: { progress: "{{ states('sensor.missing') | float }}" }
            """.write(toFile: folder + "/end.yaml", atomically: true, encoding: .utf8)
        try "[]".write(toFile: folder + "/states.json", atomically: true, encoding: .utf8)
        let render = try Subprocess(["render", folder + "/end.yaml", "--states", folder + "/states.json", "--phase", "end",
                                     "--at", "2026-11-22T12:00:00Z"])
        #expect(await render.exitStatus() == 0)
        #expect(Array(render.stdout.lines.prefix(2)) == ["washer: active, end → aivi (aivi)", "PATCH https://api.getaivi.app/activity/washer"])
        let body = try JSONParser.parse(render.stdout.lines.first { $0.hasPrefix("{") } ?? "null")
        #expect(body["state"] == "IDLE")
        #expect(body["content"]?["state"] == "Washing", "the content of the last update")
        #expect(render.stdout.lines.contains { $0.hasPrefix("  note: activities.washer.on_end.progress: float got string 'unknown'") }, "\(render.stdout.lines)")
    }
}
