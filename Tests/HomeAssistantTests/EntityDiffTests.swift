import HomeAssistant
import JSON
import Testing

/// A diff's attributes whichever way the new state is built: straight from the old one's when only values change,
/// through the general path when names come or go. (Written by the session's reviewer against the old general code.)
struct EntityDiffTests {
    let snapshot: JSONValue = try! JSONParser.parse(#"{"a":{"sensor.x":{"s":"0","a":{"b":1,"d":2,"f":3},"c":"C0","lc":100.0}}}"#)

    func applied(_ diff: String) throws -> (before: EntityState, after: EntityState) {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let before = try #require(store["sensor.x"])
        _ = store.apply(try JSONParser.parse(#"{"c":{"sensor.x":"# + diff + "}}"))
        return (before, try #require(store["sensor.x"]))
    }

    @Test func aNewNameSetTwiceWithExistingOnesLastWins() throws {
        let (before, after) = try applied(#"{"+":{"a":{"d":20,"e":5,"e":6,"d":21}}}"#)
        #expect(after.attributes == ["b": 1, "d": 21, "e": 6, "f": 3])
        #expect(Array(after.attributes.map(\.key)) == ["b", "d", "f", "e"], "names there keep their place, a new one comes last")
        #expect(before.attributes == ["b": 1, "d": 2, "f": 3])
    }

    @Test func aRemovalWithSetsOfExistingNames() throws {
        #expect(try applied(#"{"+":{"a":{"b":10}},"-":{"a":["f","nope"]}}"#).after.attributes == ["b": 10, "d": 2])
    }

    @Test func aDiffWithoutAttributesKeepsThemAll() throws {
        let (before, after) = try applied(#"{"+":{"s":"1","lc":200.0,"c":"C1"}}"#)
        #expect(after.attributes == before.attributes)
        #expect(after.state == "1" && after.lastChanged == 200 && after.lastUpdated == 200)
        #expect(before.state == "0" && before.lastChanged == 100)
    }

    @Test func aValueSetToNullStaysANull() throws {
        #expect(try applied(#"{"+":{"a":{"d":null}}}"#).after.attributes == ["b": 1, "d": .null, "f": 3])
    }

    @Test func manyValuesChangedTakeTheGeneralPathAlike() throws {
        let members = (0..<20).map { #""m\#($0)":\#($0)"# }.joined(separator: ",")
        var store = EntityStore()
        _ = store.replace(withSnapshot: try JSONParser.parse(#"{"a":{"sensor.y":{"s":"0","a":{"# + members + #"},"lc":1.0}}}"#))
        let changed = (0..<20).map { #""m\#($0)":\#($0 * 10)"# }.joined(separator: ",")
        _ = store.apply(try JSONParser.parse(#"{"c":{"sensor.y":{"+":{"a":{"# + changed + "}}}}}"))
        let after = try #require(store["sensor.y"])
        #expect(after.attributes == EntityAttributes(Dictionary(uniqueKeysWithValues: (0..<20).map { ("m\($0)", JSONValue.int($0 * 10)) })))
    }
}

/// Attributes keep the order Home Assistant sent them in, from a snapshot and through diffs: its templates iterate and
/// print them in that order (`attributes.items()`, `{{ states.x.attributes }}`).
struct AttributeOrderTests {
    @Test func aSnapshotKeepsHomeAssistantsOrderAndADiffAppendsNewNames() throws {
        var store = EntityStore()
        _ = try store.replace(withSnapshot: JSONText(#"""
            {"a":{"sensor.t":{"s":"21.5","a":{"unit_of_measurement":"°C","friendly_name":"Outdoor","device_class":"temperature"},"lc":1.0}}}
            """#))
        #expect(try #require(store["sensor.t"]).attributes.map(\.key) == ["unit_of_measurement", "friendly_name", "device_class"])
        _ = store.apply(try JSONParser.parse(#"{"c":{"sensor.t":{"+":{"a":{"state_class":"measurement","friendly_name":"Out"}}}}}"#))
        let after = try #require(store["sensor.t"])
        #expect(after.attributes.map(\.key) == ["unit_of_measurement", "friendly_name", "device_class", "state_class"])
        #expect(after.attribute("friendly_name") == "Out")
        _ = store.apply(try JSONParser.parse(#"{"c":{"sensor.t":{"-":{"a":["friendly_name"]}}}}"#))
        #expect(try #require(store["sensor.t"]).attributes.map(\.key) == ["unit_of_measurement", "device_class", "state_class"])
    }
}
