import Dispatcher
import Foundation
import HomeAssistant
import JSON
@testable import LiveBridge
import Rules
import Testing

/// What the engine reads of each activity on the common path, laid out apart from the rules: activities sharing an
/// `active_when` share its evaluation, and each keeps its own targets and debounce.
struct ActivityFactsTests {
    static let rules = """
        backends:
          aivi: { type: aivi, token: t }
          aivi2: { type: aivi, token: u }
        defaults: { backend: aivi, debounce: 0s }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer', 'on') }}"
            template: generic
            progress: 0.5
          washer_debounced:
            active_when: "{{ is_state('sensor.washer', 'on') }}"
            template: generic
            progress: 0.5
            debounce: 2s
          washer_twice:
            backend: [aivi, aivi2]
            active_when: "{{ is_state('sensor.washer', 'on') }}"
            template: generic
            progress: 0.5
          dryer:
            active_when: "{{ is_state('sensor.dryer', 'on') }}"
            template: generic
            progress: 0.5

        """


    func change(_ id: String, _ state: String, _ n: Double) -> [EntityChange] {
        [.updated(EntityState(entityID: id, state: state, attributes: ["n": .double(n)], lastChanged: 0))]
    }

    /// "activity update" per command, sorted; an update told as urgent says so.
    func events(_ commands: [ActivityEngine.Command]) -> [String] {
        commands.map { command in
            if case .changed(urgent: true) = command.event { return "\(command.activity) update urgent" }
            return "\(command.activity) \(command.event.name)"
        }.sorted()
    }

    @Test func sharedConditionsAreOneAndEachActivityKeepsItsOwnFacts() throws {
        let rules = try loadRules(Self.rules)
        let facts = ActivityFacts(rules.activities)
        #expect(facts.conditions.map(\.source) == ["{{ is_state('sensor.washer', 'on') }}", "{{ is_state('sensor.dryer', 'on') }}"])
        #expect(facts.facts.map(\.condition) == [0, 0, 0, 1])
        #expect(facts.facts.map(\.targets) == [1, 1, 2, 1])
        #expect(facts.facts.map(\.restartsDebounce) == [false, true, false, false])
        #expect(facts.facts.map(\.hasStatus) == [false, false, false, false])
    }

    @Test func activitiesSharingAConditionStartChangeAndEndEachByItsOwnRules() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules))
        let starts = events(engine.evaluate(changes: change("sensor.washer", "on", 1), now: 0).commands)
        #expect(starts == ["washer start", "washer_debounced start", "washer_twice start", "washer_twice start"])
        // The first change after the start is told to every target.
        #expect(events(engine.evaluate(changes: change("sensor.washer", "on", 2), now: 1).commands)
                == ["washer update", "washer_debounced update", "washer_twice update", "washer_twice update"])
        // While every target waits to pull, a change is told again only where it restarts a debounce.
        #expect(events(engine.evaluate(changes: change("sensor.washer", "on", 3), now: 2).commands) == ["washer_debounced update"])
        #expect(events(engine.evaluate(changes: change("sensor.washer", "off", 4), now: 3).commands)
                == ["washer end", "washer_debounced end", "washer_twice end", "washer_twice end"])
        #expect(engine.evaluate(changes: change("sensor.dryer", "off", 1), now: 4).commands.isEmpty)
    }

    /// An Island Pulse status of `failed` is told at once, even while every target already waits to pull
    /// (the one path where the engine reads more than `facts` for an activity still active).
    @Test func aFailedStatusIsUrgentEvenWhileTheTargetsWait() throws {
        let rules = try loadRules("""
            backends:
              pulse: { type: islandpulse, token: t }
            defaults: { backend: pulse, debounce: 0s }
            activities:
              backup:
                job_id: backup
                active_when: "{{ states('sensor.backup') != 'off' }}"
                template: progress
                status: "{{ 'failed' if is_state('sensor.backup', 'broken') else 'running' }}"
                message: "{{ states('sensor.backup') }}"
                progress: 0.5
              quiet:
                backend: pulse
                active_when: "{{ states('sensor.backup') != 'off' }}"
                template: progress
                message: "{{ states('sensor.backup') }}"
                progress: 0.5

            """)
        #expect(ActivityFacts(rules.activities).facts.map(\.hasStatus) == [true, false])
        var engine = ActivityEngine(rules: rules)
        func told(_ state: String, _ now: Double) -> [String] {
            events(engine.evaluate(changes: change("sensor.backup", state, now), now: now).commands)
        }
        #expect(told("step1", 0) == ["backup start", "quiet start"])
        #expect(told("step2", 1) == ["backup update", "quiet update"])
        // Both wait to pull: a plain change is not told again...
        #expect(told("step3", 2) == [])
        // ...but a failure is, urgently, and only where a status says so; and so is every change while it is failed
        // (urgency is the status's value, not its edge: the dispatcher's gate lets an urgent update past the budget).
        #expect(told("broken", 3) == ["backup update urgent"])
        #expect(told("broken", 4) == ["backup update urgent"])
    }

    /// A shared `active_when` that fails is evaluated once, and its problem is reported for each activity that has it.
    @Test func aSharedConditionsErrorIsReportedForEachActivity() throws {
        let rules = try loadRules("""
            backends:
              aivi: { type: aivi, token: t }
            defaults: { backend: aivi, debounce: 0s }
            activities:
              one:
                active_when: "{{ states('sensor.x') | float > 1 }}"
                template: generic
                progress: 0.5
              two:
                active_when: "{{ states('sensor.x') | float > 1 }}"
                template: generic
                progress: 0.5

            """)
        #expect(ActivityFacts(rules.activities).conditions.count == 1)
        var engine = ActivityEngine(rules: rules)
        let result = engine.evaluate(changes: change("sensor.x", "not a number", 1), now: 0)
        #expect(result.commands.isEmpty)
        #expect(result.problems.count == 2, "\(result.problems)")
        #expect(result.problems.contains { $0.hasPrefix("activity one: active_when") }, "\(result.problems)")
        #expect(result.problems.contains { $0.hasPrefix("activity two: active_when") }, "\(result.problems)")
        #expect(events(engine.evaluate(changes: change("sensor.x", "2", 2), now: 1).commands) == ["one start", "two start"])
    }
}
