import Foundation
import Testing

/// The "what you will see" pictures in blueprints/README.md are what `blueprint test --out` draws for each blueprint
/// on the devices the README names (blueprints/pictures/states.json): regenerated, they must not change
/// (LIVEBRIDGE_UPDATE_GOLDEN=1 writes them after a deliberate change).
@Suite(.timeLimit(.minutes(1)))
struct BlueprintPicturesTests {
    static let blueprints = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("blueprints").path

    static let pictures: [(String, String, [String])] = [
        ("progress_from_percentage", "progress_from_percentage", ["--input", "progress_entity=sensor.washer_program_progress",
            "--input", "running_entity=sensor.washer_operation_state", "--input", "running_states=[run]", "--trigger", "running"]),
        ("timer_countdown", "timer_countdown", ["--input", "timer_entity=timer.laundry"]),
        ("timer_countdown_paused", "timer_countdown", ["--input", "timer_entity=timer.pizza", "--input", "activity=pizza", "--input", "title=Pizza"]),
        ("monitor_two_columns", "monitor_two_columns", ["--input", "active_entity=vacuum.roborock_s8", "--input", "active_states=[cleaning, returning]",
            "--input", "left_entity=vacuum.roborock_s8", "--input", "right_entity=sensor.roborock_s8_battery"]),
        ("ev_segmented", "ev_segmented", ["--input", "charging_entity=binary_sensor.model_3_charging",
            "--input", "battery_entity=sensor.model_3_battery_level"]),
    ]

    @Test(arguments: pictures)
    func thePictureIsWhatTheBlueprintDraws(picture: String, blueprint: String, inputs: [String]) async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-picture-\(UUID().uuidString).svg").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let run = try Subprocess(["blueprint", "test", Self.blueprints + "/" + blueprint + ".yaml", "--states", Self.blueprints + "/pictures/states.json",
                                  "--at", "2026-11-22T12:00:00Z", "--out", out] + inputs)
        #expect(await run.exitStatus() == 0, "\(run.stdout.lines) \(run.stderr.lines)")
        let drawn = try String(contentsOfFile: out, encoding: .utf8)
        let file = Self.blueprints + "/pictures/" + picture + ".svg"
        if ProcessInfo.processInfo.environment["LIVEBRIDGE_UPDATE_GOLDEN"] == "1" { try drawn.write(toFile: file, atomically: true, encoding: .utf8) }
        #expect(drawn == (try String(contentsOfFile: file, encoding: .utf8)), "blueprints/pictures/\(picture).svg is stale: regenerate it")
        let readme = try String(contentsOfFile: Self.blueprints + "/README.md", encoding: .utf8)
        #expect(readme.contains("](pictures/\(picture).svg)"), "blueprints/README.md shows \(picture)")
    }
}
