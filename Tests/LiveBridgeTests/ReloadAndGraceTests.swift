import Foundation
import HomeAssistant
import LiveBridge
import Rules
import Testing
import LiveActivity
import JSON
import Dispatcher

/// The engine's reload before the first snapshot and during a restart grace, and the grace against the wall clock.
/// (From an independent review's attack on session 43's lifecycle changes; each failed before its mend.)
struct ReloadAndGraceTests {
    let engineTests = ActivityEngineTests()
    func state(_ id: String, _ value: String) -> EntityChange { engineTests.state(id, value) }
    static let twoBackends = """
        defaults: { backend: aivi }
        backends:
          aivi: { type: aivi, token: t }
          pulse: { type: aivi, token: u, base_url: "http://127.0.0.1:9" }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer', 'running') }}"
            template: generic
            progress: 0.5
        """

    /// A washer restored from state.json at aivi; a reload before the first snapshot adds the pulse target. The first
    /// snapshot (washer running) must start it at pulse: its update alone would find no lane at the dispatcher.
    @Test func aTargetAddedByAReloadBeforeTheFirstSnapshotStartsAtTheSnapshot() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.twoBackends), running: ["washer"])
        let added = try loadRules(Self.twoBackends.replacingOccurrences(of: "template: generic", with: "backend: [aivi, pulse]\n    template: generic"))
        #expect(added.activities[0].targets.map(\.name) == ["aivi", "pulse"])
        let reloaded = engine.reload(added, now: 0, statesKnown: false)
        #expect(reloaded.commands.isEmpty)
        let snapshot = engine.evaluateAll(taking: [state("sensor.washer", "running")], now: 10).commands
        let told = snapshot.map { "\($0.target) \($0.event.name)" }
        #expect(told.contains("pulse start"), "the added target must be started (a `changed` finds no lane at the dispatcher): \(told)")
    }

    /// The same with the states known: a start at the added target (the reference behaviour).
    @Test func aTargetAddedByAReloadWithStatesStartsAtOnce() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.twoBackends), running: ["washer"])
        _ = engine.evaluateAll(taking: [state("sensor.washer", "running")], now: 0)
        let added = try loadRules(Self.twoBackends.replacingOccurrences(of: "template: generic", with: "backend: [aivi, pulse]\n    template: generic"))
        let told = engine.reload(added, now: 10).commands.map { "\($0.target) \($0.event.name)" }
        #expect(told.contains("pulse start"), "\(told)")
    }

    /// A reload (SIGHUP) while the restart grace holds the washer (Home Assistant starting): the grace goes on, the
    /// washer is not ended by the reload's evaluation.
    @Test func aReloadDuringTheGraceKeepsTheHeldActivityHeld() throws {
        var engine = ActivityEngine(rules: try loadRules(ActivityEngineTests.rules))
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "20")], now: 0)
        engine.holdEnds(until: 1120)
        #expect(engine.evaluate(changes: [state("sensor.washer", "unavailable")], now: 1000).commands.isEmpty)
        #expect(engine.heldActivities == ["washer"])
        let reload = engine.reload(try loadRules(ActivityEngineTests.rules), now: 1010).commands
        #expect(reload.isEmpty, "a reload within the grace ends the held washer: \(reload.map { "\($0.activity) \($0.event.name)" })")
    }

    /// A reload early in the grace; the washer's sensor turns unavailable after it, still within the grace: held.
    @Test func aFallAfterAReloadWithinTheGraceIsHeld() throws {
        var engine = ActivityEngine(rules: try loadRules(ActivityEngineTests.rules))
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "20")], now: 0)
        engine.holdEnds(until: 1120)
        _ = engine.reload(try loadRules(ActivityEngineTests.rules), now: 1001)
        let fall = engine.evaluate(changes: [state("sensor.washer", "unavailable")], now: 1010).commands
        #expect(fall.isEmpty, "the grace no longer holds after a reload: \(fall.map { "\($0.activity) \($0.event.name)" })")
    }

    /// The wall clock stepped forward while the grace runs (NTP at boot): the service's monotonic timer has not
    /// fired, so a falling edge with the sensor unavailable is still held.
    @Test func aWallClockSteppedForwardDoesNotEndTheGraceEarly() throws {
        var engine = ActivityEngine(rules: try loadRules(ActivityEngineTests.rules))
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "20")], now: 0)
        engine.holdEnds(until: 1120)
        let fall = engine.evaluate(changes: [state("sensor.washer", "unavailable")], now: 1000 + 3600).commands
        #expect(fall.isEmpty, "a clock an hour ahead ends the washer within the grace: \(fall.map { "\($0.activity) \($0.event.name)" })")
    }
}

/// The tick before the first snapshot and an activity whose condition only Home Assistant renders.
struct TickBeforeSnapshotTests {
    /// Restored from state.json; its condition only Home Assistant renders (its renderings wait for the snapshot),
    /// its progress reads the time. `reads` is `.nothing`, so the tick before the first snapshot evaluates it.
    @Test func theTickBeforeTheSnapshotLeavesAnActivityHomeAssistantRendersAlone() throws {
        let rules = try loadRules("""
            backends: { aivi: { type: aivi, token: t } }
            defaults: { debounce: 0s }
            activities:
              laundry:
                active_when: "{{ area_name('laundry') == 'Laundry' }}"
                template: generic
                progress: "{{ now().minute / 60 }}"
            """)
        #expect(rules.activities[0].readsTime)
        var engine = ActivityEngine(rules: rules, running: ["laundry"])
        let tick = engine.tick(now: 1_795_608_000, statesKnown: false)
        #expect(tick.problems.isEmpty && tick.commands.isEmpty, "commands \(tick.commands.map(\.event.name)), problems \(tick.problems)")
    }
}
