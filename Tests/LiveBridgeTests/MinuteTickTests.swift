import Foundation
import HomeAssistant
import LiveBridge
import Rules
import Testing
import LiveActivity
import JSON
import Dispatcher

/// Templates reading the time are evaluated again each minute, as Home Assistant renders them: a countdown's bar
/// moves with no entity changing, a condition on the time of day turns.
struct MinuteTickTests {

    @Test func onlyTheActivitiesReadingTheTimeAreEvaluatedEachMinute() throws {
        var engine = ActivityEngine(rules: try loadRules("""
            backends: { aivi: { type: aivi, token: t } }
            defaults: { debounce: 0s }
            activities:
              countdown:
                active_when: "{{ is_state('timer.t', 'active') }}"
                template: generic
                progress: "{{ ((as_datetime(state_attr('timer.t', 'finishes_at')) - now()).total_seconds() / 600) | round(2) }}"
              evening:
                active_when: "{{ utcnow().hour >= 18 }}"
                template: generic
                progress: 0.5
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: 0.5
            """))
        #expect(engine.readsTime)
        let finishes = "2026-11-25T12:10:00+00:00"
        let noon = 1_795_608_000.0  // 2026-11-25T12:00:00Z
        _ = engine.evaluateAll(taking: [.updated(EntityState(entityID: "timer.t", state: "active", attributes: ["finishes_at": .string(finishes)], lastChanged: 0)),
                                        .updated(EntityState(entityID: "sensor.washer", state: "running", lastChanged: 0))], now: noon)
        let minute = engine.tick(now: noon + 60).commands
        #expect(minute.map { "\($0.activity) \($0.event.name)" } == ["countdown update"], "the washer reads no time; the evening has not begun")
        #expect(engine.payload(activity: "countdown", target: "aivi", kind: .update, now: noon + 60).request?.body["content"]?["progress"] == 0.9)
        let evening = engine.tick(now: noon + 6 * 3600).commands
        #expect(evening.map { "\($0.activity) \($0.event.name)" } == ["countdown update", "evening start"])
    }

    /// Before the first snapshot (no states): the tick evaluates only activities reading no entity, and a reload
    /// ends only what it removes.
    @Test func withNoStatesYetOnlyWhatReadsNoEntityIsEvaluated() throws {
        let rules = try loadRules("""
            backends: { aivi: { type: aivi, token: t } }
            defaults: { debounce: 0s }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') and now().year > 2000 }}"
                template: generic
                progress: 0.5
              evening:
                active_when: "{{ utcnow().hour >= 18 }}"
                template: generic
                progress: 0.5
              dryer:
                active_when: "{{ is_state('sensor.dryer', 'running') }}"
                template: generic
                progress: 0.5
            """)
        var engine = ActivityEngine(rules: rules, running: ["washer", "dryer"])
        let evening = 1_795_608_000.0 + 6 * 3600  // 2026-11-25T18:00:00Z
        #expect(engine.tick(now: evening, statesKnown: false).commands.map { "\($0.activity) \($0.event.name)" } == ["evening start"])
        let withoutDryer = try loadRules("""
            backends: { aivi: { type: aivi, token: t } }
            defaults: { debounce: 0s }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') and now().year > 2000 }}"
                template: generic
                progress: 0.5
            """)
        #expect(engine.reload(withoutDryer, now: evening, statesKnown: false).commands.map { "\($0.activity) \($0.event.name)" } == ["evening end", "dryer end"], "what the reload removes ends; the washer waits")
        #expect(engine.tick(now: evening + 60).commands.map { "\($0.activity) \($0.event.name)" } == ["washer end"], "with states known, as before")
    }

    @Test func rulesReadingNoTimeNeedNoClock() throws {
        let engine = ActivityEngine(rules: try loadRules("""
            backends: { aivi: { type: aivi, token: t } }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: "{{ states('sensor.washer_progress') | float(0) / 100 }}"
            """))
        #expect(!engine.readsTime)
    }
}
