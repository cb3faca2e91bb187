import HomeAssistant
import JSON
import Testing
import Platform

/// The compressed `subscribe_entities` format → full states, with fixtures shaped like Home Assistant 2025.4.4's.
struct EntityStoreTests {
    let snapshot: JSONValue = try! JSONParser.parse("""
        {"a":{"input_number.washer_progress":{"s":"0.0","a":{"min":0.0,"max":100.0,"step":1.0,"mode":"slider","icon":"mdi:washing-machine","friendly_name":"Washer progress"},"c":"01M8ABC","lc":1795343668.42},
              "timer.laundry":{"s":"active","a":{"duration":"1:30:00","finishes_at":"2026-11-22T13:30:00+00:00"},"c":{"id":"01CTX","parent_id":null},"lc":1795343000.0,"lu":1795343600.5}}}
        """)

    @Test func aSnapshotBecomesFullStates() throws {
        var store = EntityStore()
        let changes = store.replace(withSnapshot: snapshot)
        #expect(changes.map(\.entityID) == ["input_number.washer_progress", "timer.laundry"])
        let washer = try #require(store["input_number.washer_progress"])
        #expect(washer.state == "0.0")
        #expect(washer.attributes["max"] == .double(100.0))
        #expect(washer.lastChanged == 1795343668.42)
        #expect(washer.lastUpdated == 1795343668.42, "lu omitted means equal to lc")
        let timer = try #require(store["timer.laundry"])
        #expect(timer.lastUpdated == 1795343600.5)
    }

    @Test func aDomainSelectionKeepsItsMembersAndTheNamedIDsOnly() throws {
        var store = EntityStore()
        store.share(EntitySelection(entityIDs: ["timer.laundry"], domains: ["light"]))
        let event = try JSONParser.parse("""
            {"a":{"light.kitchen":{"s":"on","a":{},"c":"1","lc":1795343000.0},"light.hall":{"s":"off","a":{},"c":"2","lc":1795343000.0},
                  "timer.laundry":{"s":"idle","a":{},"c":"3","lc":1795343000.0},"sensor.other":{"s":"1","a":{},"c":"4","lc":1795343000.0},
                  "lightning.x":{"s":"1","a":{},"c":"5","lc":1795343000.0}}}
            """)
        let changes = store.replace(withSnapshot: event)
        #expect(changes.map(\.entityID) == ["light.hall", "light.kitchen", "timer.laundry"])
        let added = store.apply(try JSONParser.parse(#"{"a":{"light.porch":{"s":"on","a":{},"c":"6","lc":1795343100.0},"switch.x":{"s":"on","a":{},"c":"7","lc":1795343100.0}}}"#))
        #expect(added.map(\.entityID) == ["light.porch"])
    }

    /// A snapshot's new entities are reported in its own order, the state machine's (templates iterate `states` in
    /// it), not by id.
    @Test func aSnapshotReportsEntitiesInHomeAssistantsOrder() throws {
        var store = EntityStore()
        let changes = try store.replace(withSnapshot: JSONText("""
            {"a":{"sensor.b":{"s":"1","a":{},"c":"1","lc":1795343000.0},"light.z":{"s":"on","a":{},"c":"2","lc":1795343000.0},
                  "sensor.a":{"s":"2","a":{},"c":"3","lc":1795343000.0}}}
            """))
        #expect(changes.map(\.entityID) == ["sensor.b", "light.z", "sensor.a"])
    }

    /// The store keeps Home Assistant's order, which a lending connection's consumer reads: first seen first (a
    /// snapshot in its own order), an added entity last, a removed one out, back again last; a later snapshot keeps
    /// the places of the entities still there, drops the gone and puts the new last in its order. A selection keeps
    /// its own.
    @Test func theStoreKeepsHomeAssistantsOrder() throws {
        var store = EntityStore()
        func entity(_ id: String) -> String { #""\#(id)":{"s":"1","a":{},"c":"1","lc":1795343000.0}"# }
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{\#(entity("sensor.b")),\#(entity("light.z")),\#(entity("sensor.a"))}}"#))
        #expect(store.order == ["sensor.b", "light.z", "sensor.a"])
        _ = try store.apply(JSONText(#"{"a":{\#(entity("sensor.c")),\#(entity("light.z"))}}"#))
        #expect(store.order == ["sensor.b", "light.z", "sensor.a", "sensor.c"], "an entity added again keeps its place")
        _ = try store.apply(JSONText(#"{"r":["sensor.b"]}"#))
        #expect(store.order == ["light.z", "sensor.a", "sensor.c"])
        _ = try store.apply(JSONText(#"{"a":{\#(entity("sensor.b"))}}"#))
        #expect(store.order == ["light.z", "sensor.a", "sensor.c", "sensor.b"], "back again: last")
        _ = store.set("sensor.a", fullState: .null)
        _ = store.set("sensor.a", fullState: ["state": "2"])
        _ = store.set("sensor.new", fullState: ["state": "2"])
        #expect(store.order == ["light.z", "sensor.c", "sensor.b", "sensor.a", "sensor.new"])
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{\#(entity("sensor.d")),\#(entity("sensor.b")),\#(entity("light.z")),\#(entity("sensor.e"))}}"#))
        #expect(store.order == ["light.z", "sensor.b", "sensor.d", "sensor.e"])
        #expect(Set(store.order) == Set(store.states.keys))
        store.share(entityIDs: ["sensor.b", "sensor.e"])
        #expect(store.order == ["sensor.b", "sensor.e"])
    }

    /// A store that holds snapshots back lends the states from before a snapshot until its consumer took it; a
    /// snapshot that changes nothing (no change handed over, nothing to take) is lent at once; a selection filters
    /// what is held back too.
    @Test func aSnapshotIsLentOnceTaken() throws {
        var store = EntityStore()
        store.isLent = true
        func entity(_ id: String, _ state: String) -> String { #""\#(id)":{"s":"\#(state)","a":{},"c":"1","lc":1795343000.0}"# }
        let first = #"{"a":{\#(entity("sensor.a", "1")),\#(entity("sensor.b", "1"))}}"#
        _ = try store.replace(withSnapshot: JSONText(first))
        #expect(store.lent.states.isEmpty && store.lent.order.isEmpty)
        store.tookSnapshot()
        #expect(store.lent.order == ["sensor.a", "sensor.b"])
        #expect(try store.replace(withSnapshot: JSONText(first)).isEmpty)
        #expect(store.lent.order == ["sensor.a", "sensor.b"], "nothing changed: nothing held back")
        _ = store.apply(try JSONParser.parse(#"{"c":{"sensor.a":{"+":{"s":"5"}}}}"#))
        #expect(store.lent.states["sensor.a"]?.state == "5", "nothing held back: the change is lent")
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{\#(entity("sensor.a", "unavailable")),\#(entity("sensor.b", "1"))}}"#))
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{\#(entity("sensor.a", "0"))}}"#))
        #expect(store.lent.states["sensor.a"]?.state == "5" && store.lent.order == ["sensor.a", "sensor.b"], "from before the first not taken")
        store.share(entityIDs: ["sensor.b"])
        #expect(store.lent.order == ["sensor.b"] && store.lent.states.keys.sorted() == ["sensor.b"])
        store.tookSnapshot()
        #expect(store.lent.order.isEmpty, "the store as it is: sensor.a gone with the last snapshot, sensor.b outside the selection")
        _ = store.apply(try JSONParser.parse(#"{"a":{"sensor.b":{"s":"2","a":{},"c":"1","lc":1795343000.0}}}"#))
        #expect(store.lent.states["sensor.b"]?.state == "2", "changes after a snapshot taken are lent at once")
    }

    @Test func aDiffSetsStateAddsAndRemovesAttributes() throws {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let changes = store.apply(try JSONParser.parse("""
            {"c":{"timer.laundry":{"+":{"s":"paused","lc":1795344100.5,"c":"01J","a":{"remaining":"1:25:00"}},"-":{"a":["finishes_at"]}}}}
            """))
        let timer = try #require(store["timer.laundry"])
        #expect(changes == [.updated(timer)])
        #expect(timer.state == "paused")
        #expect(timer.attributes == ["duration": "1:30:00", "remaining": "1:25:00"])
        #expect(timer.lastChanged == 1795344100.5)
        #expect(timer.lastUpdated == 1795344100.5, "lc present means last_updated moves too")
    }

    /// Times no datetime can hold (year 293,000; infinity from an overflowing literal) are ignored, never stored:
    /// formatting them or reading them in a template would otherwise have nothing sane to give.
    /// The one-diff event is read in one pass; any other shape by parts. Both must give the same states and changes.
    @Test func theOneDiffEventReadsAsTheGeneralPathDoes() throws {
        let diffs = [
            #"{"sensor.a":{"+":{"s":"2","a":{"t":1.5,"unit":"%"},"lc":1795343700.0,"c":"01CTX"},"-":{"a":["old"]}}}"#,
            #"{"sensor.a":{"-":{"a":["old"]},"+":{"lu":1795343701.0}}}"#,
            #"{"sensor.unknown":{"+":{"s":"1"}}}"#,
            #"{"sensor.a":"not a diff"}"#,
        ]
        for diff in diffs {
            var fast = EntityStore(), general = EntityStore()
            let snapshot = #"{"a":{"sensor.a":{"s":"1","a":{"old":true,"unit":"W"},"lc":1795343600.0}}}"#
            _ = try fast.replace(withSnapshot: JSONText(snapshot))
            _ = try general.replace(withSnapshot: JSONText(snapshot))
            let one = try fast.apply(JSONText(#"{"c":"# + diff + "}"))
            // An empty removal list makes it a two-part event, read by parts.
            let parts = try general.apply(JSONText(#"{"c":"# + diff + #","r":[]}"#))
            #expect(one == parts, "\(diff)")
            #expect(fast.states == general.states, "\(diff)")
        }
        var store = EntityStore()
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{"sensor.a":{"s":"1","lc":1.0}}}"#))
        #expect(try store.apply(JSONText(#"{"c":{"sensor.a":{"+":{"s":"2"}}}}"#)).map(\.entityID) == ["sensor.a"])
        #expect(store["sensor.a"]?.state == "2")
    }

    @Test func timesBeyondYear9999AreIgnored() throws {
        var store = EntityStore()
        _ = store.replace(withSnapshot: try JSONParser.parse("""
            {"a":{"sensor.far":{"s":"1","lc":9.2e12,"lu":1e999999},"sensor.near":{"s":"2","lc":1795343000.0,"lu":1e999999}}}
            """))
        #expect(try #require(store["sensor.far"]).lastChanged == 0)
        #expect(try #require(store["sensor.far"]).lastUpdated == 0)
        #expect(try #require(store["sensor.near"]).lastUpdated == 1795343000.0, "lu falls back to lc")
        _ = store.apply(try JSONParser.parse("""
            {"c":{"sensor.near":{"+":{"s":"3","lc":-9.2e12,"lu":9.2e12}}}}
            """))
        let near = try #require(store["sensor.near"])
        #expect(near.state == "3")
        #expect(near.lastChanged == 1795343000.0)
        #expect(near.lastUpdated == 1795343000.0)
        #expect(near.jsonLine.contains(#""last_changed":"2026-11-22T10:23:20+00:00""#))
    }

    @Test func onlyWatchedEntitiesAreKeptWhateverTheServerSends() throws {
        var store = EntityStore()
        store.share(entityIDs: ["sensor.a"])
        let snapshot = try store.replace(withSnapshot: JSONText(#"{"a":{"sensor.a":{"s":"1"},"sensor.x":{"s":"2"}}}"#))
        #expect(snapshot.map(\.entityID) == ["sensor.a"])
        let later = try store.apply(JSONText(#"{"a":{"sensor.y":{"s":"3"}},"c":{"sensor.x":{"+":{"s":"4"}}}}"#))
        #expect(later.isEmpty)
        #expect(store.states.keys.sorted() == ["sensor.a"])
    }

    @Test func formattingATimeIsTotal() {
        #expect(Timestamp.iso8601(9.2e12) == "9999-12-31T23:59:59+00:00")
        #expect(Timestamp.iso8601(-.infinity) == "0001-01-01T00:00:00+00:00")
        #expect(Timestamp.iso8601(.nan) == "1970-01-01T00:00:00+00:00")
        #expect(Timestamp.epoch(fromISO8601: "0000-12-31T00:00:00+00:00") == nil)
        #expect(Timestamp.epoch(fromISO8601: "0001-01-01T00:00:00+00:00") == -62_135_596_800)
    }

    @Test func aDiffWithOnlyLastUpdatedKeepsLastChanged() throws {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        _ = store.apply(["c": ["input_number.washer_progress": ["+": ["a": ["step": 5.0], "lu": 1795343700.0]]]])
        let washer = try #require(store["input_number.washer_progress"])
        #expect(washer.state == "0.0")
        #expect(washer.attributes["step"] == .double(5.0))
        #expect(washer.lastChanged == 1795343668.42)
        #expect(washer.lastUpdated == 1795343700.0)
    }

    @Test func addedAndRemovedEntities() {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let added = store.apply(["a": ["sensor.new": ["s": "on", "a": [:], "c": "x", "lc": 1.5]]])
        #expect(added.map(\.entityID) == ["sensor.new"])
        let removed = store.apply(["r": ["timer.laundry", "sensor.unknown"]])
        #expect(removed == [.removed(entityID: "timer.laundry")])
        #expect(store.states.keys.sorted() == ["input_number.washer_progress", "sensor.new"])
    }

    /// Read from the frame's text as it came: `a`, then `c`, then `r`, ids sorted, whatever order the members had;
    /// `lc` before `lu` and `+` before `-` within a diff.
    @Test func anEventIsAppliedInTheSameOrderWhateverItsMembersOrder() throws {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let changes = try store.apply(JSONText("""
            {"r":["sensor.b"],"c":{"sensor.b":{"-":{"a":["x"]},"+":{"lu":20.0,"a":{"x":2},"lc":10.0}},"timer.laundry":{"+":{"s":"idle"}}},
             "a":{"sensor.b":{"s":"on","a":{"x":1},"lc":5},"sensor.a":{"s":"off","lc":4}}}
            """))
        #expect(changes.map(\.entityID) == ["sensor.a", "sensor.b", "sensor.b", "timer.laundry", "sensor.b"])
        guard case .updated(let changedB) = changes[2] else { Issue.record("\(changes)"); return }
        #expect(changedB.attributes["x"] == nil, "the - of a diff comes after its +")
        #expect(changedB.lastChanged == 10.0)
        #expect(changedB.lastUpdated == 20.0, "lu wins over lc whichever comes first")
        #expect(changes.last == .removed(entityID: "sensor.b"))
        #expect(store["sensor.b"] == nil && store["sensor.a"]?.state == "off" && store["timer.laundry"]?.state == "idle")
    }

    /// Fields of the wrong kind are ignored as the tree reading ignored them: no state means no entity.
    @Test func fieldsOfTheWrongKindAreIgnored() throws {
        var store = EntityStore()
        let changes = try store.replace(withSnapshot: JSONText(#"{"a":{"sensor.n":{"s":5},"sensor.ok":{"s":"on","lc":"soon","a":[1],"c":7}}}"#))
        #expect(changes.map(\.entityID) == ["sensor.ok"])
        #expect(store["sensor.ok"] == EntityState(entityID: "sensor.ok", state: "on", lastChanged: 0))
        #expect(try store.apply(JSONText(#"{"c":{"sensor.ok":{"+":{"s":null,"lu":"x"}}},"r":"sensor.ok"}"#)).count == 1)
        #expect(store["sensor.ok"]?.state == "on")
    }

    /// The full form of `get_states` and `state_changed`: ISO times (the context is not kept); no state, no entity.
    @Test func aFullStateBecomesAnEntityState() throws {
        let full: JSONValue = ["entity_id": "sensor.a", "state": "on", "attributes": ["x": 1],
                               "last_changed": "2026-11-22T12:00:00+00:00", "last_updated": "2026-11-22T12:00:30.5+00:00",
                               "context": ["id": "01CTX", "parent_id": nil, "user_id": nil]]
        let state = try #require(EntityState(entityID: "sensor.a", fullState: full))
        #expect(state == EntityState(entityID: "sensor.a", state: "on", attributes: ["x": 1], lastChanged: 1_795_348_800,
                                     lastUpdated: 1_795_348_830.5))
        #expect(EntityState(entityID: "sensor.a", fullState: ["state": "off"])?.lastUpdated == 0)
        #expect(EntityState(entityID: "sensor.a", fullState: ["attributes": [:]]) == nil)
        #expect(EntityState(entityID: "sensor.a", fullState: .null) == nil)
    }

    /// `state_changed` sets one entity or removes it (a null new state); removing an unknown entity reports nothing.
    @Test func oneEntityIsSetOrRemoved() {
        var store = EntityStore()
        let on = EntityState(entityID: "sensor.a", state: "on", attributes: ["unit": "%"], lastChanged: 1795343668.5)
        let full: JSONValue = ["entity_id": "sensor.a", "state": "on", "attributes": ["unit": "%"],
                               "last_changed": "2026-11-22T10:34:28.500000+00:00"]
        #expect(store.set("sensor.a", fullState: full) == [.updated(on)])
        #expect(store["sensor.a"] == on)
        #expect(store.set("sensor.a", fullState: .null) == [.removed(entityID: "sensor.a")])
        #expect(store.set("sensor.a", fullState: .null).isEmpty)
        #expect(store.count == 0)
    }

    /// `get_states` as a snapshot: only watched entities are kept, the rest of the house is passed over.
    @Test func fullStatesReplaceTheStoreKeepingOnlyWatchedEntities() {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let changes = store.replace(withFullStates: [
            ["entity_id": "sensor.kept", "state": "1", "last_changed": "2026-11-22T12:00:00+00:00"],
            ["entity_id": "sensor.other", "state": "2", "last_changed": "2026-11-22T12:00:00+00:00"],
            ["entity_id": "sensor.no_state", "last_changed": "2026-11-22T12:00:00+00:00"],
        ], keeping: ["sensor.kept", "sensor.no_state"])
        #expect(changes.map(\.entityID) == ["input_number.washer_progress", "timer.laundry", "sensor.kept"])
        #expect(store.states.keys.sorted() == ["sensor.kept"])
    }

    /// A state is shared with whoever took it before (the engine): a diff changing state, attributes and times makes
    /// the store's own copy and leaves the one given out as it was.
    @Test func aDiffLeavesAStateGivenOutUnchanged() throws {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let givenOut = try #require(store["input_number.washer_progress"])
        _ = store.apply(try JSONParser.parse("""
            {"c":{"input_number.washer_progress":{"+":{"s":"40.0","a":{"max":50.0},"lc":1795343700.0,"c":"01NEW"},"-":{"a":["icon"]}}}}
            """))
        let now = try #require(store["input_number.washer_progress"])
        #expect(givenOut.state == "0.0" && givenOut.attribute("max") == .double(100.0) && givenOut.attribute("icon") != nil)
        #expect(givenOut.lastChanged == 1795343668.42)
        #expect(now.state == "40.0" && now.attribute("max") == .double(50.0) && now.attribute("icon") == nil)
        #expect(now.lastChanged == 1795343700.0 && now.lastUpdated == 1795343700.0)
        #expect(now.attribute("friendly_name") == "Washer progress")
    }

    /// A sensor's usual diff changes values, not names: the new state is built straight from the old one's attributes.
    /// The last value given for a name counts, the others stay, and the state given out before is untouched.
    @Test func aDiffChangingOnlyValuesKeepsEveryOtherAttribute() throws {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let givenOut = try #require(store["input_number.washer_progress"])
        _ = store.apply(try JSONParser.parse("""
            {"c":{"input_number.washer_progress":{"+":{"s":"41.0","a":{"max":60.0,"step":2.0,"max":70.0}}}}}
            """))
        let now = try #require(store["input_number.washer_progress"])
        #expect(now.attributes == ["min": 0.0, "max": 70.0, "step": 2.0, "mode": "slider", "icon": "mdi:washing-machine",
                                   "friendly_name": "Washer progress"])
        #expect(now.state == "41.0" && now.lastChanged == 1795343668.42)
        #expect(givenOut.attribute("max") == .double(100.0) && givenOut.attribute("step") == .double(1.0) && givenOut.state == "0.0")
    }

    /// Events come unchecked (their subscriber reads them, strictly): a malformed part further on must not leave the
    /// parts before it applied, whichever path reads the event.
    @Test func aMalformedEventChangesNothing() throws {
        var store = EntityStore()
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{"sensor.a":{"s":"1","lc":1.0}}}"#))
        for bad in [#"{"a":{"sensor.b":{"s":"on"}},"c":{"sensor.a":{"+":{"s":"2"}}},"r":[tru]}"#,
                    #"{"c":{"sensor.a":{"+":{"s":"2"}}},"x":01}"#, #"{"c":{"sensor.a":{"+":{"s":"2","lu":1.}}}}"#,
                    #"{"c":{"sensor.a":{"+":{"s":"2"}}}} x"#] {
            #expect(throws: JSONParser.SyntaxError.self, "\(bad)") { try store.apply(JSONText(bad)) }
            #expect(store["sensor.a"]?.state == "1", "\(bad)")
            #expect(store["sensor.b"] == nil, "\(bad)")
        }
    }

    @Test func aDiffForAnUnknownEntityIsIgnored() {
        var store = EntityStore()
        #expect(store.apply(["c": ["sensor.ghost": ["+": ["s": "on"]]]]).isEmpty)
        #expect(store.count == 0)
    }

    @Test func aNewSnapshotReplacesTheStoreAndReportsOnlyDifferences() {
        var store = EntityStore()
        _ = store.replace(withSnapshot: snapshot)
        let next: JSONValue = ["a": [
            "input_number.washer_progress": snapshot["a"]!["input_number.washer_progress"]!,
            "sensor.fresh": ["s": "1", "lc": 2.0],
        ]]
        let changes = store.replace(withSnapshot: next)
        #expect(changes.map(\.entityID) == ["timer.laundry", "sensor.fresh"])
        #expect(changes.first == .removed(entityID: "timer.laundry"))
        #expect(store.states.keys.sorted() == ["input_number.washer_progress", "sensor.fresh"])
    }

    @Test func theWatchLineHasTheDocumentedKeysAndISOTimes() {
        let state = EntityState(entityID: "sensor.x", state: "on", attributes: ["a": 1], lastChanged: 1795343668.42,
                                lastUpdated: 1795343669)
        #expect(state.jsonLine == #"{"entity_id":"sensor.x","state":"on","attributes":{"a":1},"last_changed":"2026-11-22T10:34:28.420000+00:00","last_updated":"2026-11-22T10:34:29+00:00"}"#)
    }
}

/// The fixtures above are trees; the store reads text, as it comes from Home Assistant.
extension EntityStore {
    mutating func replace(withSnapshot event: JSONValue) -> [EntityChange] { try! replace(withSnapshot: JSONText(event)) }
    mutating func apply(_ event: JSONValue) -> [EntityChange] { try! apply(JSONText(event)) }
}
