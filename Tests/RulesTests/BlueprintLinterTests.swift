import Foundation
import Rules
import Testing

struct BlueprintLinterTests {
    static let blueprints = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("blueprints")

    @Test(arguments: ["progress_from_percentage", "timer_countdown", "monitor_two_columns", "ev_segmented"])
    func theShippedBlueprintsAreClean(name: String) {
        #expect(BlueprintLinter.lint(file: Self.blueprints.appendingPathComponent(name + ".yaml").path) == [])
    }

    @Test func mistakesAreReportedWithLineAndColumn() throws {
        let folder = try ConfigFolder(["bad.yaml": """
            blueprint:
              name: Broken
              domain: script
              input:
                sensor:
                  name: Sensor
                  selector:
                    entiti: {}
            triggers:
              - trigger: state
                entity_id: !input sensr
            actions:
              - event: livebridge_activity
                event_data:
                  activity: washer
                  payload:
                    template: progress
                    progress: { style: simple, value: 0.5, color: grey }
                    header_left: { value: x, colour: red }

            """])
        let errors = BlueprintLinter.lint(file: folder.file("bad.yaml")).map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" }
        #expect(errors == [
            "2:3 blueprint.description: is required",
            "2:3 blueprint.source_url: is required",
            "2:3 blueprint.homeassistant.min_version: is required, e.g. \"2024.10.0\"",
            "3:11 blueprint.domain: \"script\": these blueprints are automations",
            "8:9 blueprint.input.sensor.selector.entiti: unknown selector \"entiti\" (did you mean \"entity\"?)",
            "11:16 : !input sensr is not declared under blueprint.input (did you mean \"sensor\"?)",
            "18:55 actions[0].event_data.payload.progress.color: unknown colour \"grey\" (did you mean \"gray\"?)",
            "19:34 actions[0].event_data.payload.header_left.colour: unknown key \"colour\"; expected: value, text_color, formatter",
        ], "\(errors)")
    }

    @Test func aBlueprintCommandExitsOneOnErrors() throws {
        let folder = try ConfigFolder(["empty.yaml": "{}\n"])
        let errors = BlueprintLinter.lint(file: folder.file("empty.yaml"))
        #expect(errors.map(\.path) == ["blueprint", "triggers", "actions"])
    }
}
