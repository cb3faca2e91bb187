@testable import HomeAssistant
import JSON
import Testing

/// A `render_template` event read from its text: the result keeps its own text (a dict's key order, Python's), an
/// error is a failure, a warning no rendering at all.
struct TemplateRenderingTests {
    @Test func aResultKeepsItsText() throws {
        let event = JSONText(#"{"result": [{"entity_id": "sensor.b", "name": "B", "area_name": ""}], "listeners": {"all": false}}"#)
        let rendering = try #require(try TemplateRendering(event: event))
        guard case .result(let value, let text?) = rendering else { Issue.record("no text kept: \(rendering)"); return }
        #expect(value == [["entity_id": "sensor.b", "name": "B", "area_name": ""]])
        #expect(String(decoding: text.bytes, as: UTF8.self) == #"[{"entity_id": "sensor.b", "name": "B", "area_name": ""}]"#)
        #expect(rendering == .result([["area_name": "", "name": "B", "entity_id": "sensor.b"]]), "equal by value")
        #expect(text.bytes.startIndex == 0, "copied out of the event: a slice would keep the whole frame")
    }

    @Test func anErrorFailsAndAWarningIsNoRendering() throws {
        #expect(try TemplateRendering(event: JSONText(#"{"error": "UndefinedError: x", "level": "ERROR"}"#)) == .failure("UndefinedError: x"))
        #expect(try TemplateRendering(event: JSONText(#"{"error": "deprecated", "level": "WARNING"}"#)) == nil)
        #expect(try TemplateRendering(event: JSONText(#"{"result": null}"#)) == .result(.null))
        #expect(throws: (any Error).self) { try TemplateRendering(event: JSONText(#"{"result": [1,}"#)) }
    }
}
