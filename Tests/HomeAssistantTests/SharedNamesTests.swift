import HomeAssistant
import JSON
import Testing

/// The store keeps one instance of names many entities repeat: checked by where each string's bytes live.
struct SharedNamesTests {
    func storage(_ string: String) -> UnsafeRawPointer? {
        string.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) } ?? nil
    }

    @Test func entitiesKeepTheRulesInstanceOfTheirIDs() throws {
        let watched = ["input_number.washer_progress", "sensor.dryer_remaining_time"]
        var store = EntityStore()
        store.share(entityIDs: watched)
        _ = try store.replace(withSnapshot: JSONText("""
            {"a":{"input_number.washer_progress":{"s":"1","lc":1},"sensor.not_watched_but_sent":{"s":"2","lc":1}}}
            """))
        _ = try store.apply(JSONText(#"{"a":{"sensor.dryer_remaining_time":{"s":"3","lc":2}}}"#))
        let washer = try #require(store["input_number.washer_progress"])
        #expect(storage(washer.entityID) == storage(watched[0]))
        let key = try #require(store.states.keys.first { $0 == watched[0] })
        #expect(storage(key) == storage(watched[0]), "the dictionary key is the same instance")
        #expect(storage(try #require(store["sensor.dryer_remaining_time"]).entityID) == storage(watched[1]))
        #expect(store["sensor.not_watched_but_sent"] == nil, "an id not watched is not kept")
    }

    /// On the `state_changed` path too: full states from `get_states` and events keep the rules' instance.
    @Test func fullStatesKeepTheRulesInstanceOfTheirIDs() throws {
        let watched = ["input_number.washer_progress", "sensor.dryer_remaining_time"]
        var store = EntityStore()
        store.share(entityIDs: watched)
        _ = store.replace(withFullStates: [["entity_id": .string(String("input_number.washer_progress")), "state": "1"]],
                          keeping: EntitySelection(entityIDs: watched))
        _ = store.set(String("sensor.dryer_remaining_time"), fullState: ["state": "3"])
        #expect(storage(try #require(store["input_number.washer_progress"]).entityID) == storage(watched[0]))
        #expect(storage(try #require(store["sensor.dryer_remaining_time"]).entityID) == storage(watched[1]))
        let key = try #require(store.states.keys.first { $0 == watched[1] })
        #expect(storage(key) == storage(watched[1]))
    }

    @Test func aLongAttributeNameIsStoredOnceForAllEntities() throws {
        var store = EntityStore()
        _ = try store.replace(withSnapshot: JSONText("""
            {"a":{"sensor.a":{"s":"1","a":{"unit_of_measurement":"%","supported_features":1},"lc":1},
                  "sensor.b":{"s":"2","a":{"unit_of_measurement":"W"},"lc":1}}}
            """))
        _ = try store.apply(JSONText(#"{"c":{"sensor.b":{"+":{"a":{"supported_features":7}}}}}"#))
        func name(_ entity: String, _ attribute: String) throws -> String {
            try #require(store[entity]?.attributes.first { $0.key == attribute }?.key)
        }
        #expect(storage(try name("sensor.a", "unit_of_measurement")) == storage(try name("sensor.b", "unit_of_measurement")))
        #expect(storage(try name("sensor.a", "supported_features")) == storage(try name("sensor.b", "supported_features")),
                "a name a diff adds is shared too")
        #expect(store["sensor.b"]?.attributes["supported_features"] == 7 && store["sensor.b"]?.attributes["unit_of_measurement"] == "W")
    }

    /// Attribute names come from integrations: past the limit, new names are kept as they came, values intact.
    @Test func pastTheLimitNamesAreKeptUnshared() throws {
        let many = (0..<1_100).map { "\"attribute_with_a_long_name_\($0)\":\($0)" }.joined(separator: ",")
        var store = EntityStore()
        _ = try store.replace(withSnapshot: JSONText("""
            {"a":{"sensor.a":{"s":"1","a":{\(many)},"lc":1},"sensor.b":{"s":"1","a":{\(many)},"lc":1}}}
            """))
        let a = try #require(store["sensor.a"]), b = try #require(store["sensor.b"])
        #expect(a.attributes.count == 1_100 && b.attributes["attribute_with_a_long_name_1099"] == 1099)
        let sharedCount = zip(a.attributes, b.attributes).filter { storage($0.key) == storage($1.key) }.count
        #expect(sharedCount == 1_024)
    }
}
