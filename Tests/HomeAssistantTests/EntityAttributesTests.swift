@testable import HomeAssistant
import JSON
import Testing

struct EntityAttributesTests {
    /// In the order given, as Home Assistant's templates iterate and print them (a Python dict's order).
    @Test func readByNameAndIteratedInTheOrderGiven() {
        let attributes = EntityAttributes([("unit", "%"), ("friendly_name", "Washer"), ("brightness", 128)])
        #expect(attributes["friendly_name"] == "Washer")
        #expect(attributes["brightness"] == 128)
        #expect(attributes["missing"] == nil)
        #expect(attributes.map(\.key) == ["unit", "friendly_name", "brightness"])
        #expect(attributes.count == 3)
        #expect(attributes == EntityAttributes([("brightness", 128), ("unit", "%"), ("friendly_name", "Washer")]),
                "equal whatever the order, as Python's dicts")
        #expect(attributes != EntityAttributes([("brightness", 127), ("unit", "%"), ("friendly_name", "Washer")]))
    }

    /// As a JSON object read by Python: a name given twice keeps its first place and its last value.
    @Test func aNameGivenTwiceKeepsItsLastValue() {
        let attributes = EntityAttributes([("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5)])
        #expect(attributes.map(\.key) == ["a", "b"])
        #expect(attributes["a"] == 4 && attributes["b"] == 5)
    }

    /// Past a handful of names the same rules hold through an index: order given, a name again at its first place
    /// with its last value, new names last, removals gone (an entity with thousands of attributes stays linear).
    @Test func manyNamesKeepTheSameRules() {
        let names = (0..<40).map { "n\(($0 * 7) % 40)" }
        var attributes = EntityAttributes(names.map { ($0, JSONValue.int(1)) } + [("n7", 2), ("n0", 3)])
        #expect(attributes.map(\.key) == names)
        #expect(attributes["n7"] == 2 && attributes["n0"] == 3 && attributes.count == 40)
        attributes.apply(setting: [("new", 4), ("n3", 5)] + (0..<20).map { ("x\($0)", JSONValue.int($0)) }, removing: ["n0", "missing", "x3"])
        #expect(attributes.map(\.key) == Array(names.dropFirst()) + ["new"] + (0..<20).filter { $0 != 3 }.map { "x\($0)" })
        #expect(attributes["n3"] == 5 && attributes["n0"] == nil && attributes.count == 40 - 1 + 1 + 19)
        let reversed = EntityAttributes(Array(attributes.reversed()))
        #expect(reversed == attributes, "equal whatever the order")
        var changed = attributes
        changed["x19"] = 0
        #expect(changed != attributes)
    }

    @Test func settingInsertsReplacesAndNilRemoves() {
        var attributes: EntityAttributes = ["m": 1]
        attributes["z"] = "last"
        attributes["a"] = "first"
        attributes["m"] = 2
        #expect(attributes.map(\.key) == ["m", "z", "a"] && attributes["m"] == 2, "a new name comes last, a set one keeps its place")
        attributes["m"] = nil
        attributes["missing"] = nil
        #expect(attributes.map(\.key) == ["z", "a"])
        #expect(attributes["m"] == nil, "a removed attribute reads as absent, not as JSON null")
        attributes["n"] = .null
        #expect(attributes["n"] == .some(.null), "a null value is kept")
    }

    @Test func theDictionaryFormRoundTrips() {
        let dictionary: [String: JSONValue] = ["icon": "mdi:washing-machine", "remaining": 12.5, "tags": ["a", "b"]]
        let attributes = EntityAttributes(dictionary)
        #expect(attributes.dictionary == dictionary)
        #expect(attributes == ["tags": ["a", "b"], "icon": "mdi:washing-machine", "remaining": 12.5])
        #expect(attributes != ["icon": "mdi:washing-machine"])
    }

    /// States share one allocation until one of them changes: the other keeps what it had.
    @Test func aChangedCopyLeavesTheOriginalAlone() {
        let original = EntityState(entityID: "sensor.washer", state: "on", attributes: ["x": 1], lastChanged: 5)
        var copy = original
        #expect(copy == original)
        copy.attributes["x"] = nil
        copy.state = "off"
        copy.lastUpdated = 9
        #expect(original.attributes["x"] == 1 && original.state == "on" && original.lastUpdated == 5)
        #expect(copy.attributes.isEmpty && copy.state == "off" && copy.lastUpdated == 9)
        #expect(copy != original)
        #expect(original.attribute("x") == 1 && copy.attribute("x") == nil && original.attribute("missing") == nil)
        let rebuilt = EntityState(entityID: "sensor.washer", state: "on", attributes: ["x": 1], lastChanged: 5)
        #expect(rebuilt == original, "equal fields in different boxes are equal")
    }

    /// The fields and the attributes live in one allocation: every way of building a state reads back the same.
    @Test func aStateReadsBackWhatItWasGiven() {
        let many = EntityAttributes((0..<50).map { (key: "attribute_\($0)", value: JSONValue.int($0)) })
        var state = EntityState(entityID: "sensor.many", state: "x", attributes: many, lastChanged: 1, lastUpdated: 2)
        #expect(state.attributes == many && state.attributes.count == 50)
        #expect(state.attribute("attribute_7") == 7 && state.attribute("attribute_49") == 49)
        state.attributes["attribute_7"] = "seven"
        state.state = "y"
        #expect(state.attribute("attribute_7") == "seven" && state.state == "y" && state.lastUpdated == 2)
        let empty = EntityState(entityID: "sensor.none", state: "", lastChanged: 0)
        #expect(empty.attributes.isEmpty && empty.attribute("x") == nil)
    }

    /// `livebridge watch` writes attributes in Home Assistant's order.
    @Test func theWatchLineKeepsTheOrder() {
        let state = EntityState(entityID: "sensor.t", state: "7", attributes: EntityAttributes([("unit", "°C"), ("friendly_name", "T")]), lastChanged: 0)
        #expect(state.jsonLine.contains(#""attributes":{"unit":"°C","friendly_name":"T"}"#))
    }
}
