import Foundation
import HomeAssistant
import LiveBridge
import Rules
import Testing
import LiveActivity
import JSON
import Dispatcher

/// Where the lent engine could read states its changes have not told it of yet (the store ahead of the feed), against
/// an engine of its own table, which moves only with the changes it takes. (From an independent review's attack.)
struct LendingWindowTests {

    final class Box: @unchecked Sendable {
        var store = EntityStore()
        init(lent: Bool = false) { store.isLent = lent }
    }

    static func entity(_ id: String, _ state: String) -> String { #""\#(id)":{"s":"\#(state)","a":{},"lc":1795343000.0}"# }

    /// A reconnection's snapshot (Home Assistant restarting: the washer `unavailable`) is in the store before the service
    /// takes its batch and starts the restart grace (`holdEnds`). Anything that evaluates in between — the minute's
    /// tick, a `render_template` result that came in the same socket read, the dispatcher pulling a due update — reads
    /// the states from before the snapshot (`EntityStore.holdsSnapshotsBack`), as an engine keeping its own table did,
    /// until the service has begun the grace and taken the snapshot (`tookSnapshot`); the grace then holds the end.
    @Test func aReconnectionSnapshotIsNotSeenBeforeTheRestartGraceStarts() throws {
        let rules = try loadRules("""
            backends:
              aivi: { type: aivi, token: t }
            defaults: { debounce: 0s }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') and now().year > 1900 }}"
                template: generic
                state: "{{ states('sensor.washer') }}"
                progress: 0.5
            """)
        let box = Box(lent: true)
        var oldStore = EntityStore()
        var own = ActivityEngine(rules: rules)
        var lent = ActivityEngine(rules: rules, lender: .init { box.store.lent })
        let first = #"{"a":{\#(Self.entity("sensor.washer", "running"))}}"#
        let ownStart = own.evaluateAll(taking: try oldStore.replace(withSnapshot: JSONText(first)), now: 0).commands.map(\.event.name)
        let lentFirst = try box.store.replace(withSnapshot: JSONText(first)).map(\.withoutState)
        #expect(box.store.lent.states.isEmpty, "not lent before the consumer takes it")
        box.store.tookSnapshot()
        let lentStart = lent.evaluateAll(taking: lentFirst, now: 0).commands.map(\.event.name)
        #expect(ownStart == ["start"] && lentStart == ["start"])

        // Home Assistant restarts: the reconnection's snapshot is applied on the socket's thread, its changes wait in
        // the feed for the service.
        let again = #"{"a":{\#(Self.entity("sensor.washer", "unavailable"))}}"#
        let ownPending = try oldStore.replace(withSnapshot: JSONText(again))
        let lentPending = try box.store.replace(withSnapshot: JSONText(again)).map(\.withoutState)

        // Either the minute's tick (or a rendering's evaluation) runs before the service's batch job, or the dispatcher
        // pulls an update due now: each on copies, to compare both.
        var ownTicked = own, lentTicked = lent
        let ownTick = ownTicked.tick(now: 60).commands.map(\.event.name)
        let lentTick = lentTicked.tick(now: 60).commands.map(\.event.name)
        let ownPull = own.payload(activity: "washer", target: "aivi", kind: .update, now: 60).request?.body["content"]?["state"]?.stringValue
        let lentPull = lent.payload(activity: "washer", target: "aivi", kind: .update, now: 60).request?.body["content"]?["state"]?.stringValue

        // Then the service takes the batch: a snapshot, so the grace starts first.
        ownTicked.holdEnds(until: 1_000)
        lentTicked.holdEnds(until: 1_000)
        let ownBatch = ownTicked.evaluate(changes: ownPending, now: 61).commands.map(\.event.name)
        box.store.tookSnapshot()
        _ = lentTicked.evaluate(changes: lentPending, now: 61)
        #expect(lentTicked.payload(activity: "washer", target: "aivi", kind: .update, now: 61).request == nil, "held: nothing to show")

        #expect(!ownTick.contains("end") && ownBatch == [] && ownTicked.heldActivities == ["washer"], "old: the end is held by the grace")
        #expect(ownPull == "running")
        #expect(lentTick == ownTick, "lent: the tick ended the washer before the grace began")
        #expect(lentTicked.heldActivities == ownTicked.heldActivities)
        #expect(lentPull == ownPull, "lent: a pull rendered Home Assistant's restart before the grace held it")
    }

    /// Removed and back while the consumer is behind, with another entity added in between: Home Assistant's order
    /// (and the store's) has the other first, and so does what the lent engine's templates iterate.
    @Test func reAddedWhileBehindOrder() async throws {
        let rules = try loadRules("""
            backends:
              aivi: { type: aivi, token: t }
            defaults: { debounce: 0s }
            activities:
              all:
                active_when: "{{ states | list | count > 0 }}"
                template: generic
                state: "{{ states | map(attribute='entity_id') | join(',') }}"
                progress: 0.5
            """)
        let box = Box()
        var lent = ActivityEngine(rules: rules, lender: .init { (box.store.states, box.store.order) })
        let snapshot = #"{"a":{\#(Self.entity("sensor.a", "1")),\#(Self.entity("sensor.q", "1"))}}"#
        _ = lent.evaluateAll(taking: try box.store.replace(withSnapshot: JSONText(snapshot)).map(\.withoutState), now: 0)
        let feed = EntityChangeFeed()
        for event in [#"{"r":["sensor.q"]}"#, #"{"a":{\#(Self.entity("sensor.p", "1"))}}"#, #"{"a":{\#(Self.entity("sensor.q", "2"))}}"#] {
            feed.publish(try box.store.apply(JSONText(event)).map(\.withoutState))
        }
        #expect(box.store.order == ["sensor.a", "sensor.p", "sensor.q"])
        _ = lent.evaluate(changes: await feed.next() ?? [], now: 0)
        let shown = lent.payload(activity: "all", target: "aivi", kind: .update, now: 0).request?.body["content"]?["state"]?.stringValue
        #expect(shown == "sensor.a,sensor.p,sensor.q")
    }
}
