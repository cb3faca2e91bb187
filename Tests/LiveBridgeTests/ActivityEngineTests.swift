import Foundation
import HomeAssistant
import LiveBridge
import Rules
import Testing
import LiveActivity
import JSON
import Dispatcher
import Synchronization

/// Edges of active_when, and only the activities that read a change are evaluated.
struct ActivityEngineTests {
    static let rules = """
        backends:
          aivi: { type: aivi, token: t }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer', 'running') }}"
            template: generic
            progress: "{{ states('sensor.washer_progress') | float / 100 }}"
            on_end: { state: Done }
          dryer:
            active_when: "{{ is_state('sensor.dryer', 'running') }}"
            template: generic
            progress: 0.5
        """


    func state(_ id: String, _ value: String) -> EntityChange { .updated(EntityState(entityID: id, state: value, lastChanged: 0)) }

    /// Each command as "activity event state progress"; a marked change is rendered as the dispatcher would pull it.
    func summary(_ commands: [ActivityEngine.Command], pulling engine: inout ActivityEngine) -> [String] {
        commands.compactMap { command in
            let body: BackendRequest
            switch command.event {
            case .start(let r), .change(let r, _), .end(let r): body = r
            case .changed:
                guard let pulled = engine.payload(activity: command.activity, target: command.target, kind: .update, now: 0).request else { return nil }
                body = pulled
            }
            return "\(command.activity) \(command.event.name) \(body.body["state"]?.stringValue ?? "") \(body.body["content"]?["progress"]?.doubleValue ?? -1)"
        }
    }

    func evaluated(_ engine: inout ActivityEngine, _ ids: [String]) -> [String] {
        let commands = engine.evaluate(ids: ids, now: 0).commands
        return summary(commands, pulling: &engine)
    }

    /// A change marks an activity once until the dispatcher pulls its payload: the pull renders from the newest
    /// states, so a thousand changes before it cost the dispatcher nothing. With a debounce every change is told, as
    /// each one starts the quiet period again.
    @Test func aChangeIsToldOnceUntilThePayloadIsPulled() throws {
        let rules = Self.rules.replacingOccurrences(of: "backends:", with: "defaults: { debounce: 0s }\nbackends:")
        var engine = ActivityEngine(rules: try loadRules(rules))
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "10")], now: 0)
        var told = 0
        for n in 11...1_010 {
            told += engine.evaluate(changes: [state("sensor.washer_progress", String(n % 100))], now: 0).commands.count
        }
        #expect(told == 1)
        #expect(engine.payload(activity: "washer", target: "aivi", kind: .update, now: 0).request?.body["content"]?["progress"]?.doubleValue == 0.1)
        #expect(engine.evaluate(changes: [state("sensor.washer_progress", "50")], now: 0).commands.map(\.event.name) == ["update"])
        // An end is never held back by a change waiting for its pull, nor is the next start.
        #expect(engine.evaluate(changes: [state("sensor.washer", "idle")], now: 0).commands.map(\.event.name) == ["end"])
        #expect(engine.evaluate(changes: [state("sensor.washer", "running")], now: 0).commands.map(\.event.name) == ["start"])
        #expect(engine.evaluate(changes: [state("sensor.washer_progress", "60")], now: 0).commands.map(\.event.name) == ["update"])

        var debounced = ActivityEngine(rules: try loadRules(Self.rules))
        _ = debounced.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "10")], now: 0)
        let each = (11...20).map { debounced.evaluate(changes: [state("sensor.washer_progress", String($0))], now: 0).commands.count }
        #expect(each == Array(repeating: 1, count: 10))
    }

    @Test func risingStartsChangesUpdateFallingEnds() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules))
        var touched = engine.apply([state("sensor.washer", "running"), state("sensor.washer_progress", "20")])
        #expect(touched == ["washer"])
        #expect(evaluated(&engine, touched) == ["washer start ONGOING 0.2"])
        touched = engine.apply([state("sensor.washer_progress", "40")])
        #expect(evaluated(&engine, touched) == ["washer update ONGOING 0.4"])
        touched = engine.apply([state("sensor.washer", "idle")])
        #expect(evaluated(&engine, touched) == ["washer end IDLE 0.4"])
        touched = engine.apply([state("sensor.washer_progress", "60")])
        #expect(engine.evaluate(ids: touched, now: 0).commands.isEmpty)
    }

    /// The daemon's engine keeps no states: it reads the connection's store (lent for each evaluation) and takes
    /// changes that carry ids. Fed the same history, it tells the same starts, updates and ends as an engine of its own
    /// table, and a template iterating `states` sees the lender's order.
    @Test func anEngineReadingLentStatesActsAsOneKeepingItsOwn() throws {
        let rules = Self.rules + """

              count:
                active_when: "{{ states.sensor | list | count > 0 }}"
                template: generic
                state: "{{ states.sensor | map(attribute='entity_id') | join(',') }}"
                progress: 0.5
            """
        let store = Mutex<(states: [String: EntityState], order: [String])>(([:], []))
        var own = ActivityEngine(rules: try loadRules(rules))
        var lent = ActivityEngine(rules: try loadRules(rules), lender: .init { store.withLock { $0 } })
        func change(_ id: String, _ value: String?) -> [String] {
            let changed: EntityChange = value.map { state(id, $0) } ?? .removed(entityID: id)
            store.withLock { store in
                if let value {
                    if store.states.updateValue(EntityState(entityID: id, state: value, lastChanged: 0), forKey: id) == nil { store.order.append(id) }
                } else {
                    store.states[id] = nil
                    store.order.removeAll { $0 == id }
                }
            }
            func told(_ engine: inout ActivityEngine, _ changes: [EntityChange]) -> [String] {
                engine.evaluate(changes: changes, now: 0).commands.map { command in
                    let body: JSONValue? = switch command.event {
                    case .start(let request), .change(let request, _), .end(let request): request.body
                    case .changed: engine.payload(activity: command.activity, target: command.target, kind: .update, now: 0).request?.body
                    }
                    let shown = body?["content"]?["state"]?.stringValue ?? body?["state"]?.stringValue ?? "-"
                    return "\(command.activity) \(command.event.name) \(shown)"
                }
            }
            let ownTold = told(&own, [changed])
            let lentTold = told(&lent, [changed.withoutState])
            #expect(ownTold == lentTold, "\(id) → \(value ?? "removed")")
            #expect(own.states == lent.states)
            return lentTold
        }
        #expect(change("sensor.washer_progress", "20") == ["count start sensor.washer_progress"])
        #expect(change("sensor.washer", "running") == ["washer start ONGOING", "count update sensor.washer_progress,sensor.washer"])
        #expect(change("sensor.washer_progress", "40") == ["washer update ONGOING", "count update sensor.washer_progress,sensor.washer"])
        _ = change("sensor.dryer", "running")
        _ = change("sensor.washer_progress", nil)
        #expect(change("sensor.washer_progress", "50").contains("count update sensor.washer,sensor.dryer,sensor.washer_progress"))
        _ = change("sensor.washer", "idle")
        _ = change("sensor.dryer", nil)
    }

    @Test func onlyActivitiesReadingAChangeAreTouched() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules))
        #expect(engine.apply([state("sensor.dryer", "running")]) == ["dryer"])
        #expect(engine.apply([state("sensor.unrelated", "x")]) == [])
    }

    /// The reader index keeps an entity's first reader inline and the others in a list: all come back, in rule order,
    /// each once however many of its entities a batch changes.
    @Test func aChangeInAnIteratedDomainOrAnExpandedGroupTouchesItsReaders() throws {
        let rules = try loadRules("""
            backends:
              aivi: { type: aivi, token: t }
            activities:
              lights:
                active_when: "{{ is_state('light.kitchen', 'on') or states.light | selectattr('state', 'eq', 'on') | list | count > 0 }}"
                template: generic
                progress: 0.5
                state: "{{ states.light | selectattr('state', 'eq', 'on') | map(attribute='name') | join(', ') }}"
              downstairs:
                active_when: "{{ expand('group.downstairs') | selectattr('state', 'eq', 'on') | list | count > 0 }}"
                template: generic
                progress: 0.5
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: 0.5
                state: "{{ states('light.kitchen') }}"
            """)
        var engine = ActivityEngine(rules: rules)
        #expect(rules.reads.needsEveryEntity)
        // lights names light.kitchen and iterates its domain: touched once, with the rules naming it, in rule order.
        #expect(engine.apply([state("light.kitchen", "on")]) == ["lights", "washer", "downstairs"])
        #expect(engine.apply([state("light.porch", "on")]) == ["lights", "downstairs"])
        #expect(engine.apply([state("switch.fan", "on")]) == ["downstairs"])
        let commands = engine.evaluate(ids: ["lights"], now: 0).commands
        #expect(summary(commands, pulling: &engine) == ["lights start ONGOING 0.5"])
    }

    @Test func aFieldHomeAssistantRendersTakesItsLatestResult() throws {
        let rules = try loadRules("""
            backends:
              aivi: { type: aivi, token: t }
            activities:
              kitchen:
                active_when: "{{ is_state('light.kitchen', 'on') }}"
                template: generic
                progress: "{{ area_entities('kitchen') | count / 10 }}"
            """)
        #expect(rules.templatesRenderedByHomeAssistant == ["{{ area_entities('kitchen') | count / 10 }}"])
        var engine = ActivityEngine(rules: rules)
        _ = engine.apply([state("light.kitchen", "on")])
        #expect(evaluated(&engine, ["kitchen"]).isEmpty, "no result yet: nothing to start")
        #expect(engine.apply(.result(0.3), of: "{{ area_entities('kitchen') | count / 10 }}") == ["kitchen"])
        #expect(evaluated(&engine, ["kitchen"]) == ["kitchen start ONGOING 0.3"])
        #expect(engine.apply(.result(0.4), of: "{{ area_entities('kitchen') | count / 10 }}") == ["kitchen"])
        #expect(evaluated(&engine, ["kitchen"]) == ["kitchen update ONGOING 0.4"])
    }

    @Test func anEntitySeveralActivitiesReadTouchesEachOnceInRuleOrder() throws {
        let shared = """
            backends:
              aivi: { type: aivi, token: t }
            activities:
              c_first:
                active_when: "{{ is_state('sensor.shared', 'on') }}"
                template: generic
                progress: "{{ states('sensor.own') | float }}"
              a_second:
                active_when: "{{ is_state('sensor.shared', 'on') and is_state('sensor.own', '1') }}"
                template: generic
                progress: 0.5
              b_third:
                active_when: "{{ is_state('sensor.shared', 'on') }}"
                template: generic
                progress: 0.5
            """
        var engine = ActivityEngine(rules: try loadRules(shared))
        #expect(engine.apply([state("sensor.shared", "on")]) == ["c_first", "a_second", "b_third"])
        #expect(engine.apply([state("sensor.own", "1"), state("sensor.shared", "off")]) == ["c_first", "a_second", "b_third"])
        #expect(engine.apply([state("sensor.own", "2")]) == ["c_first", "a_second"])
    }

    @Test func anUnrenderableStartWaitsAndIsReportedOnce() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules))
        var touched = engine.apply([state("sensor.washer", "running"), state("sensor.washer_progress", "unavailable")])
        var result = engine.evaluate(ids: touched, now: 0)
        #expect(result.commands.isEmpty)
        #expect(result.problems == ["activity washer: activities.washer.progress: float got string 'unavailable', which is not a number, and no default",
                                    "activity washer: progress: is required"], "\(result.problems)")
        touched = engine.apply([state("sensor.washer_progress", "unavailable")])
        result = engine.evaluate(ids: touched, now: 0)
        #expect(result.problems.isEmpty)
        touched = engine.apply([state("sensor.washer_progress", "10")])
        #expect(evaluated(&engine, touched) == ["washer start ONGOING 0.1"])
    }

    @Test func afterARestartARunningActivityWhoseConditionEndedGetsItsEnd() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules), running: ["dryer"])
        let touched = engine.apply([state("sensor.dryer", "idle")])
        #expect(evaluated(&engine, touched) == ["dryer end IDLE 0.5"])
    }

    @Test func aReloadEndsRemovedActivitiesAndKeepsTheOthers() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules))
        let touched = engine.apply([state("sensor.washer", "running"), state("sensor.washer_progress", "20"), state("sensor.dryer", "running")])
        _ = engine.evaluate(ids: touched, now: 0)
        let without = try loadRules(Self.rules.components(separatedBy: "  dryer:")[0])
        let reloaded = engine.reload(without, now: 0).commands
        #expect(summary(reloaded, pulling: &engine) == ["dryer end IDLE 0.5", "washer update ONGOING 0.2"])
    }
}
