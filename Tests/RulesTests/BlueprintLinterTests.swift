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

    /// An event LiveBridge never hears, an action it does not take, a backend the rules do not declare: each named.
    @Test func theEventTypeActionAndBackendAreCheckedAgainstWhatLiveBridgeTakes() throws {
        let folder = try ConfigFolder(["typo.yaml": """
            blueprint:
              name: Typo
              description: An event with mistakes
              domain: automation
              source_url: https://example.test/typo.yaml
              homeassistant: { min_version: "2024.10.0" }
              input: { sensor: { name: Sensor, selector: { entity: {} } } }
            triggers:
              - trigger: state
                entity_id: !input sensor
            actions:
              - event: livebridge_activty
                event_data: { activity: washer, action: finish, backend: avi, payload: { template: generic, progress: 0.5 } }
              - choose:
                  - conditions: []
                    sequence:
                      - event: my_event
                        event_data: { activity: washer, action: "{{ 'end' }}", backend: "{{ 'aivi' }}" }

            """])
        func lint(_ backends: [String]?, eventType: String = "livebridge_activity") -> [String] {
            BlueprintLinter.lint(file: folder.file("typo.yaml"), eventType: eventType, backends: backends)
                .map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" }
        }
        #expect(lint(nil) == [
            "12:12 actions[0].event: \"livebridge_activty\" is not the event LiveBridge listens to (did you mean \"livebridge_activity\"?)",
            "13:45 actions[0].event_data.action: unknown action \"finish\"; LiveBridge takes start, update, end, ONGOING, IDLE",
            "17:20 actions[1].choose[0].sequence[0].event: \"my_event\" is not the event LiveBridge listens to (\"livebridge_activity\"; the rules file's events.type names another)",
        ])
        #expect(lint(["aivi", "phone"], eventType: "my_event") == [
            "12:12 actions[0].event: \"livebridge_activty\" is not the event LiveBridge listens to (\"my_event\"; the rules file's events.type names another)",
            "13:45 actions[0].event_data.action: unknown action \"finish\"; LiveBridge takes start, update, end, ONGOING, IDLE",
            "13:62 actions[0].event_data.backend: no backend named \"avi\" (did you mean \"aivi\"?)",
        ])
    }

    @Test func aBlueprintCommandExitsOneOnErrors() throws {
        let folder = try ConfigFolder(["empty.yaml": "{}\n"])
        let errors = BlueprintLinter.lint(file: folder.file("empty.yaml"))
        #expect(errors.map(\.path) == ["blueprint", "triggers", "actions"])
    }
}
