import JSON
import Testing
@testable import Templates

/// What Home Assistant rendered becomes a template value with its dicts in the order Home Assistant printed them
/// (a low-battery blueprint's list of dicts printed entity_id, name, area_name, state: they came back sorted by key).
struct HomeAssistantResultTests {
    @Test func aDictKeepsTheOrderOfItsText() {
        let text = JSONText(#"[{"entity_id": "sensor.b", "name": "B", "area_name": "", "state": "12", "more": {"z": 1, "a": 2}}]"#)
        let value = (try? text.value()) ?? .null
        #expect(TemplateValue(homeAssistantResult: value, text: text).text
            == "[{'entity_id': 'sensor.b', 'name': 'B', 'area_name': '', 'state': '12', 'more': {'z': 1, 'a': 2}}]")
        #expect(TemplateValue(homeAssistantResult: value, text: nil).text
            == "[{'area_name': '', 'entity_id': 'sensor.b', 'more': {'a': 2, 'z': 1}, 'name': 'B', 'state': '12'}]", "without text: by key")
        #expect(TemplateValue(homeAssistantResult: 5, text: JSONText("5")) == .int(5))
    }
}
