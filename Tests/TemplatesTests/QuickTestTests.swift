import HomeAssistant
import Templates
import Testing

/// A condition's quick form (`Template.quickTest`) is found only for the two shapes it covers, and holds exactly when
/// the template's value is truthy, whatever the entity's state (missing, unknown, unavailable, empty, another case).
struct QuickTestTests {
    @Test func onlyALoneHasValueOrIsStateOfLiteralsHasAQuickForm() throws {
        #expect(try Template("{{ has_value('sensor.a') }}").quickTest == .hasValue("sensor.a"))
        #expect(try Template("  {{ is_state('switch.washer', 'on') }} ").quickTest == .isState("switch.washer", "on"),
                "stripped as Home Assistant strips it")
        for source in ["x{{ has_value('sensor.a') }}", "{{ not has_value('sensor.a') }}",
                       "{{ has_value('sensor.a') and true }}", "{{ is_state('sensor.a', ['on', 'off']) }}",
                       "{% if has_value('sensor.a') %}yes{% endif %}", "{{ states('sensor.a') == 'on' }}",
                       "{{ area_name('kitchen') }}", "{{ true }}"] {
            #expect(try Template(source).quickTest == nil, "\(source)")
        }
    }

    @Test(arguments: ["{{ has_value('sensor.a') }}", "{{ has_value('SENSOR.A') }}", "{{ is_state('sensor.a', 'on') }}",
                      "{{ is_state('sensor.a', 'unknown') }}", "{{ is_state('Sensor.A', '') }}"])
    func theQuickFormHoldsExactlyWhenTheTemplateIsTruthy(_ source: String) throws {
        let template = try Template(source)
        let quick = try #require(template.quickTest)
        for state in [nil, "on", "off", "ON", "unknown", "unavailable", "", " on"] as [String?] {
            var states: [String: EntityState] = [:]
            if let state { states["sensor.a"] = EntityState(entityID: "sensor.a", state: state, lastChanged: 1_700_000_000) }
            let context = EvaluationContext(states: states, now: 1_700_000_000)
            #expect(quick.holds(in: context) == (try template.evaluate(in: context)).isTruthy, "\(source) with \(state ?? "no entity")")
        }
    }
}
