import Foundation
import HomeAssistant
import LiveBridge
import Testing
import Rules
import LiveActivity
import JSON
import Dispatcher

/// Home Assistant starting: sensors read unavailable, unknown or 0 until their integrations load. A falling
/// `active_when` within the grace after a (re)connection is held; one that still holds when the grace is over ends.
/// Times are seconds on a test clock.
struct RestartGraceTests {
    let engineTests = ActivityEngineTests()
    func state(_ id: String, _ value: String) -> EntityChange { engineTests.state(id, value) }

    /// A washer started at 0, then Home Assistant restarting at 1000 (its snapshot taken with a grace of 120 s).
    func restarted() throws -> ActivityEngine {
        var engine = ActivityEngine(rules: try loadRules(ActivityEngineTests.rules))
        #expect(engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "20")], now: 0).commands
            .map(\.event.name) == ["start"])
        engine.holdEnds(until: 1120)
        #expect(engine.evaluate(changes: [state("sensor.washer", "unavailable"), state("sensor.washer_progress", "unavailable")], now: 1000)
            .commands.isEmpty, "no end while Home Assistant starts")
        #expect(engine.heldActivities == ["washer"])
        #expect(engine.payload(activity: "washer", target: "aivi", kind: .update, now: 1000).request == nil, "no update showing unavailable either")
        return engine
    }

    /// The service says which activities are held only when `heldInsertions` moved: it counts each newly held one,
    /// not each batch that finds it still held.
    @Test func onlyANewlyHeldActivityMovesTheCount() throws {
        var engine = try restarted()
        #expect(engine.heldInsertions == 1)
        _ = engine.evaluate(changes: [state("sensor.washer_progress", "unknown")], now: 1010)
        #expect(engine.heldInsertions == 1, "still held: not newly")
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "25")], now: 1020)
        #expect(engine.heldActivities.isEmpty)
        _ = engine.evaluate(changes: [state("sensor.washer", "unavailable")], now: 1030)
        #expect(engine.heldActivities == ["washer"] && engine.heldInsertions == 2, "held again: newly")
    }

    @Test func aSensorThatComesBackWithinTheGraceEndsNothing() throws {
        var engine = try restarted()
        #expect(engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "25")], now: 1060).commands
            .map(\.event.name) == ["update"])
        #expect(engine.heldActivities.isEmpty)
        #expect(engine.releaseHeldEnds(now: 1120).commands.isEmpty)
        #expect(engine.payload(activity: "washer", target: "aivi", kind: .update, now: 1120).request?.body["content"]?["progress"]?.doubleValue == 0.25)
    }

    @Test func anEdgeThatHoldsPastTheGraceEnds() throws {
        var engine = try restarted()
        var steppedBack = engine
        #expect(steppedBack.releaseHeldEnds(now: 1000, graceOver: true).commands.map { "\($0.activity) \($0.event.name)" } == ["washer end"],
                "the service's timer says the grace is over: the wall clock set back does not keep the washer held")
        #expect(engine.releaseHeldEnds(now: 1119).commands.isEmpty, "not over yet")
        #expect(engine.releaseHeldEnds(now: 1120).commands.map { "\($0.activity) \($0.event.name)" } == ["washer end"])
        // After the grace a falling edge ends at once, and the next start is a start.
        #expect(engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "0")], now: 1200).commands
            .map(\.event.name) == ["start"])
        #expect(engine.evaluate(changes: [state("sensor.washer", "idle")], now: 1300).commands.map(\.event.name) == ["end"])
    }

    /// A real state (idle, not unavailable, unknown or 0) is Home Assistant up and the washer done: it ends at once.
    @Test func aRealStateWithinTheGraceEndsAtOnce() throws {
        var engine = try restarted()
        #expect(engine.evaluate(changes: [state("sensor.washer", "idle")], now: 1100).commands.map(\.event.name) == ["end"])
        #expect(engine.heldActivities.isEmpty)
        #expect(engine.releaseHeldEnds(now: 1120).commands.isEmpty)
    }

    @Test func aStartWithinTheGraceIsAStartAndTheGraceIsConfigured() throws {
        var engine = try restarted()
        #expect(engine.evaluate(changes: [state("sensor.dryer", "running")], now: 1010).commands.map(\.event.name) == ["start"])
        let rules = try loadRules("homeassistant: { url: http://ha.local:8123, token: t, restart_grace: 0s }\n" + ActivityEngineTests.rules)
        #expect(rules.homeAssistant?.restartGrace == .zero)
        #expect(try loadRules("homeassistant: { url: http://ha.local:8123, token: t }\n" + ActivityEngineTests.rules)
            .homeAssistant?.restartGrace == .seconds(120))
    }
}
