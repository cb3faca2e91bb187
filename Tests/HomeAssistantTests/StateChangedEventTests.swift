import JSON
import Testing
@testable import HomeAssistant

/// The state_changed path decodes a new state only for a watched entity, whatever the order of `data`'s members.
struct StateChangedEventTests {
    let event = JSONText(#"""
        {"event_type":"state_changed","data":{"new_state":{"entity_id":"sensor.a","state":"on","attributes":{"x":1}},
         "old_state":null,"entity_id":"sensor.a"},"origin":"LOCAL","time_fired":"2026-11-22T12:00:00+00:00"}
        """#)

    @Test func aWatchedEntityComesWithItsNewState() throws {
        let found = try #require(try StateChangedEvent.read(event, watching: ["sensor.a", "sensor.b"]))
        #expect(found.entityID == "sensor.a")
        #expect(found.newState["state"] == "on")
        #expect(found.newState["attributes"] == ["x": 1])
    }

    @Test func anEntityNoRuleReadsIsPassedOver() throws {
        #expect(try StateChangedEvent.read(event, watching: ["sensor.b"]) == nil)
    }

    @Test func aRemovedEntityHasANullNewState() throws {
        let removed = JSONText(#"{"data":{"entity_id":"sensor.a","old_state":{"state":"on"},"new_state":null}}"#)
        let found = try #require(try StateChangedEvent.read(removed, watching: ["sensor.a"]))
        #expect(found.newState == .null)
    }

    @Test func eventsWithoutDataOrEntityAreIgnored() throws {
        #expect(try StateChangedEvent.read(JSONText(#"{"event_type":"state_changed"}"#), watching: ["sensor.a"]) == nil)
        #expect(try StateChangedEvent.read(JSONText(#"{"data":{"entity_id":5}}"#), watching: ["sensor.a"]) == nil)
        #expect(try StateChangedEvent.read(JSONText("[]"), watching: ["sensor.a"]) == nil)
    }
}
