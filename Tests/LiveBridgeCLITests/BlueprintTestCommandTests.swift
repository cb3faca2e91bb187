import Foundation
import JSON
import Testing

/// `livebridge blueprint test`: a shipped blueprint instantiated with inputs, run once for a trigger against a states
/// file, each event it fires checked as LiveBridge takes it, and drawn.
@Suite(.timeLimit(.minutes(1)))
struct BlueprintTestCommandTests {
    static let blueprints = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("blueprints").path

    static let states = """
        [{"entity_id": "input_number.progress", "state": "40.0", "attributes": {}},
         {"entity_id": "sensor.washer_status", "state": "running", "attributes": {}},
         {"entity_id": "sensor.washer_power", "state": "3.5", "attributes": {"unit_of_measurement": "W"}},
         {"entity_id": "timer.laundry", "state": "paused", "attributes": {"duration": "0:10:00", "remaining": "0:04:30"}},
         {"entity_id": "vacuum.robo", "state": "returning", "attributes": {}},
         {"entity_id": "sensor.robo_battery", "state": "67", "attributes": {"unit_of_measurement": "%"}}]
        """

    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-bptest-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.states.write(toFile: path + "/states.json", atomically: true, encoding: .utf8)
        return path
    }

    func test(_ blueprint: String, _ arguments: [String], states: String) throws -> Subprocess {
        try Subprocess(["blueprint", "test", Self.blueprints + "/" + blueprint + ".yaml", "--states", states, "--at", "2026-11-25T12:00:00Z"] + arguments)
    }

    @Test func theConfirmedStartOfTheProgressBlueprintStartsAndAProgressChangeOnlyUpdates() async throws {
        let dir = try folder()
        let inputs = ["--input", "progress_entity=input_number.progress", "--input", "running_entity=sensor.washer_status", "--input", "activity=dishwasher"]
        let start = try test("progress_from_percentage", inputs + ["--trigger", "running", "--out", dir + "/start.svg"], states: dir + "/states.json")
        #expect(await start.exitStatus() == 0, "\(start.stderr.lines)")
        #expect(start.stdout.lines.first == "LiveBridge — progress from a percentage sensor (\(Self.blueprints)/progress_from_percentage.yaml), "
                + "trigger \"running\" (template), rendered offline")
        #expect(start.stdout.lines[1] == "actions[0]: livebridge_activity start dishwasher → aivi (aivi) PATCH /activity/dishwasher")
        let body = try JSONParser.parse(start.stdout.lines[2])
        #expect(body["content"]?["progress"]?["value"] == 0.4 && body["content"]?["header_right"]?["value"] == "40%")
        let svg = try String(contentsOfFile: dir + "/start.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.contains("40%") && svg.contains("Washing"))

        let update = try test("progress_from_percentage", inputs + ["--trigger", "progress"], states: dir + "/states.json")
        #expect(await update.exitStatus() == 0)
        #expect(update.stdout.lines[1] == "actions[0]: livebridge_activity update dishwasher → aivi (aivi) PATCH /activity/dishwasher")

        // A power sensor under its threshold: the stopped trigger ends it.
        let stopped = try test("progress_from_percentage", ["--input", "progress_entity=input_number.progress", "--input", "running_entity=sensor.washer_power",
                                                             "--input", "power_threshold=10", "--trigger", "stopped"], states: dir + "/states.json")
        #expect(await stopped.exitStatus() == 0)
        #expect(stopped.stdout.lines[1].hasPrefix("actions[0]: livebridge_activity end washer → aivi (aivi) PATCH /activity/washer"))
        #expect(try JSONParser.parse(stopped.stdout.lines[2])["state"] == "IDLE")
    }

    @Test func aPausedTimerShowsPausedWithTheTimeLeftAndAReturningVacuumIsShown() async throws {
        let dir = try folder()
        let timer = try test("timer_countdown", ["--input", "timer_entity=timer.laundry"], states: dir + "/states.json")
        #expect(await timer.exitStatus() == 0)
        #expect(timer.stdout.lines[1] == "actions[0].choose[1].sequence[0]: livebridge_activity start laundry → aivi (aivi) PATCH /activity/laundry")
        let paused = try JSONParser.parse(timer.stdout.lines[2])["content"]
        #expect(paused?["header_right"] == ["value": "Paused", "text_color": "orange"])
        #expect(paused?["footer_right"]?["value"] == "04:30 left" && paused?["progress"]?["value"] == 0.45)

        let monitor = try test("monitor_two_columns", ["--input", "active_entity=vacuum.robo", "--input", "active_states=[cleaning, returning]",
                                                       "--input", "left_entity=vacuum.robo", "--input", "right_entity=sensor.robo_battery"],
                               states: dir + "/states.json")
        #expect(await monitor.exitStatus() == 0)
        let content = try JSONParser.parse(monitor.stdout.lines[2])["content"]
        #expect(content?["left_column"]?["value"]?["value"] == "returning" && content?["right_column"]?["value"]?["value"] == "67%")
    }

    @Test func aMissingInputAndABadPayloadAreNamed() async throws {
        let dir = try folder()
        let missing = try test("timer_countdown", ["--input", "timr_entity=timer.laundry"], states: dir + "/states.json")
        #expect(await missing.exitStatus() == 1)
        #expect(missing.stderr.lines.contains { $0.hasSuffix("--input timr_entity: the blueprint has no input \"timr_entity\" (did you mean \"timer_entity\"?)") })
        #expect(missing.stderr.lines.contains { $0.hasSuffix("--input timer_entity: has no default: give --input timer_entity=…") })

        // A colour the schema refuses, given as an input: the event would not be sent, and says why.
        let bad = try test("progress_from_percentage", ["--input", "progress_entity=input_number.progress", "--input", "running_entity=sensor.washer_status",
                                                        "--input", "color=grey", "--trigger", "running"], states: dir + "/states.json")
        #expect(await bad.exitStatus() == 1)
        #expect(bad.stdout.lines[1] == "actions[0]: livebridge_activity for washer would not be sent:")
        #expect(bad.stdout.lines[2].contains("payload.progress.color") && bad.stdout.lines[2].contains("grey"), "\(bad.stdout.lines)")
    }
}
