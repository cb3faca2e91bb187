@testable import HomeAssistant
import JSON
import Testing

/// A snapshot's entries that cannot be taken are warned of, by id (helper-51: they were dropped without a word), and
/// a first event that holds no snapshot says so instead of passing for an empty home.
struct SnapshotProblemsTests {
    @Test func entriesWithoutAStateAreNamedAndTheRestTaken() throws {
        var store = EntityStore()
        var problems = EntityStore.SnapshotProblems()
        let changes = try store.replace(withSnapshot: JSONText(#"{"a":{"sensor.x":5,"sensor.y":{"a":{"k":1}},"sensor.z":{"s":"ok"},"sensor.n":{"s":null}}}"#),
                                        problems: &problems)
        #expect(changes.map(\.entityID) == ["sensor.z"])
        #expect(problems.unreadable == ["sensor.x", "sensor.y", "sensor.n"] && problems.unreadableCount == 3 && !problems.noEntities)
        #expect(store["sensor.z"]?.state == "ok" && store["sensor.x"] == nil)
    }

    @Test func aFirstEventWithoutEntitiesIsSaid() throws {
        var store = EntityStore()
        var problems = EntityStore.SnapshotProblems()
        _ = try store.replace(withSnapshot: JSONText(#"{"c":{"sensor.x":{"+":{"s":"1"}}}}"#), problems: &problems)
        #expect(problems.noEntities && problems.unreadableCount == 0)
        _ = try store.replace(withSnapshot: JSONText(#"{"a":{}}"#), problems: &problems)
        #expect(!problems.noEntities, "an empty home is a snapshot")
    }

    @Test func theWarningNamesFiveAndCountsTheRest() {
        var problems = EntityStore.SnapshotProblems()
        for n in 1...7 { problems.skipped("sensor.s\(n)") }
        #expect(problems.unreadableList == "sensor.s1, sensor.s2, sensor.s3, sensor.s4, sensor.s5 and 2 more")
    }

    @Test func subscribeEntitiesWarnsOfWhatItsSnapshotLacked() throws {
        let following = EntitySubscription(EntitySelection(entityIDs: ["sensor.a", "sensor.b"]))
        var store = EntityStore()
        store.share(entityIDs: ["sensor.a", "sensor.b"])
        let outcome = following.take(JSONText(#"{"a":{"sensor.a":{"s":"1"},"sensor.b":[1],"sensor.other":7}}"#), into: &store)
        #expect(outcome == .snapshot([.updated(try #require(store["sensor.a"]))], knownIDs: nil,
                                     warnings: ["skipped 1 entity of the first subscribe_entities event with no state: sensor.b"]))
        let notASnapshot = EntitySubscription(EntitySelection(entityIDs: ["sensor.a"]))
        var other = EntityStore()
        guard case .snapshot(let changes, _, let warnings) = notASnapshot.take(JSONText(#"{"c":{"sensor.a":{"+":{"s":"2"}}}}"#), into: &other)
        else { Issue.record("not a snapshot outcome"); return }
        #expect(changes.isEmpty)
        #expect(warnings == [#"the first subscribe_entities event held no snapshot (no "a" object): entities are known only once they change"#])
    }

    /// `get_states` names what it could not take the same way, and a clean answer says nothing.
    @Test func stateChangedFollowingWarnsOfGetStatesEntries() {
        let following = StateChangedFollowing(EntitySelection(entityIDs: ["sensor.a", "sensor.b"]))
        var store = EntityStore()
        let states: JSONValue = [["entity_id": "sensor.a", "state": "1"], ["entity_id": "sensor.b", "state": 2]]
        guard case .snapshot(_, _, let warnings) = following.takeSnapshot(.success(states), into: &store) else {
            Issue.record("not a snapshot outcome"); return
        }
        #expect(warnings == ["skipped 1 entity of get_states with no state: sensor.b"])
    }

    @Test func getStatesEntriesWithoutATextStateAreNamed() {
        var store = EntityStore()
        var problems = EntityStore.SnapshotProblems()
        let states: [JSONValue] = [
            ["entity_id": "sensor.a", "state": "1"], ["entity_id": "sensor.b", "state": 5], ["entity_id": "sensor.c"],
            ["entity_id": 7, "state": "x"], ["state": "no id"], "not an object",
        ]
        let changes = store.replace(withFullStates: states, keeping: EntitySelection(entityIDs: ["sensor.a", "sensor.b", "sensor.c"]),
                                    problems: &problems)
        #expect(changes.map(\.entityID) == ["sensor.a"])
        #expect(problems.unreadable == ["sensor.b", "sensor.c"])
    }
}
