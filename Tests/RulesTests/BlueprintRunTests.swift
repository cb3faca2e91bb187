import Foundation
import HomeAssistant
import Rules
import Testing
import Templates
import JSON

/// A blueprint run as Home Assistant runs it: YAML 1.1 values, variables in order, choose/if/condition, each event.
struct BlueprintRunTests {
    static let blueprint = """
        blueprint:
          name: Test
          domain: automation
          input:
            entity: { name: Entity, selector: { entity: {} } }
            wanted: { name: States, default: ["on"], selector: { select: { options: ["on"], multiple: true, custom_value: true } } }
            enabled: { name: Enabled, default: on, selector: { boolean: {} } }
        triggers:
          - trigger: state
            id: changed
            entity_id: !input entity
          - trigger: time_pattern
            minutes: /1
        variables:
          entity: !input entity
          wanted: !input wanted
          shown: "{{ states(entity) in wanted }}"
          doubled: "{{ (states(entity) | float(0)) * 2 }}"
        conditions: "{{ enabled_flag }}"
        actions:
          - choose:
              - conditions:
                  - condition: trigger
                    id: changed
                  - condition: state
                    entity_id: !input entity
                    state: [cleaning, returning]
                sequence:
                  - event: livebridge_activity
                    event_data: { activity: a, action: "{{ 'start' if shown else 'end' }}", payload: { n: "{{ doubled }}" } }
            default:
              - condition: numeric_state
                entity_id: sensor.battery
                below: 20
              - event: livebridge_activity
                event_data: { activity: b, action: start, trigger: "{{ trigger.id }}" }
        """

    func run(_ inputs: [String: String], states: [String: String], trigger: String?) async throws -> BlueprintRun.Outcome {
        let folder = try ConfigFolder(["bp.yaml": Self.blueprint.replacingOccurrences(of: "enabled_flag", with: "true")])
        let instance = try BlueprintInstance.instantiate(file: folder.file("bp.yaml"), inputs: inputs).get()
        let entities = Dictionary(uniqueKeysWithValues: states.map { ($0.key, EntityState(entityID: $0.key, state: $0.value, lastChanged: 0)) })
        let renderer = LocalBlueprintRenderer(context: EvaluationContext(states: entities, now: 0))
        return try await BlueprintRun(instance, renderer: renderer, states: entities).run(trigger: trigger)
    }

    @Test func inputsDefaultsAndTheTriggerDecideWhichEventFires() async throws {
        let cleaning = try await run(["entity": "vacuum.robo", "wanted": "[cleaning]"], states: ["vacuum.robo": "cleaning"], trigger: "changed")
        #expect(cleaning.fired.map(\.path) == ["actions[0].choose[0].sequence[0]"])
        #expect(cleaning.fired.first?.data["action"] == "start" && cleaning.fired.first?.data["payload"]?["n"]?.doubleValue == 0)
        let returning = try await run(["entity": "vacuum.robo"], states: ["vacuum.robo": "returning"], trigger: "changed")
        #expect(returning.fired.first?.data["action"] == "end", "returning is not in the default states [on]")
        let tick = try await run(["entity": "vacuum.robo"], states: ["vacuum.robo": "docked", "sensor.battery": "15"], trigger: "1")
        #expect(tick.fired.map(\.path) == ["actions[0].default[1]"])
        #expect(tick.fired.first?.data["trigger"] == 1, "a trigger without an id is numbered, as Home Assistant does (its text read as a number)")
        let charged = try await run(["entity": "vacuum.robo"], states: ["vacuum.robo": "docked", "sensor.battery": "80"], trigger: "1")
        #expect(charged.fired.isEmpty && charged.notes == ["actions[0].default[0]: the condition does not hold; the rest of the sequence does not run"])
    }

    @Test func yamlReadsAsHomeAssistantReadsIt() {
        #expect(["on", "yes", "True"].map(BlueprintInstance.scalarValue) == [.bool(true), .bool(true), .bool(true)])
        #expect(["off", "no", "~", "12", "1.5", "1_000", "running"].map(BlueprintInstance.scalarValue)
                == [.bool(false), .bool(false), .null, .int(12), .double(1.5), .int(1000), .string("running")])
        #expect(BlueprintRun.nativeType("0.4") == .double(0.4) && BlueprintRun.nativeType("40") == .int(40))
        #expect(BlueprintRun.nativeType("007") == .string("007") && BlueprintRun.nativeType("True") == .bool(true))
        #expect(TemplateValue.mapping(["a": .list([.int(1), .string("it's \"x\"")]), "b": .none]).jinjaLiteral == #"{"a": [1, "it's \"x\""], "b": None}"#)
    }
}
