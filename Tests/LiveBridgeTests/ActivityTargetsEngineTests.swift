import Foundation
import HomeAssistant
import LiveBridge
import Rules
import Testing
import LiveActivity
import JSON
import Dispatcher

/// An activity at several targets: each gets its own start, updates and end; a reload adding or removing a target
/// starts or ends it there only.
struct ActivityTargetsEngineTests {
    static func rules(backend: String) -> String {
        """
        backends:
          aivi: { type: aivi, token: t }
          family: { type: homeassistant, service: [notify.mobile_app_me, notify.mobile_app_partner] }
        activities:
          washer:
            backend: \(backend)
            active_when: "{{ is_state('sensor.washer', 'running') }}"
            template: generic
            state: Washing
            progress: "{{ states('sensor.washer_progress') | float / 100 }}"
            on_end: { state: Done }
        """
    }


    func state(_ id: String, _ value: String) -> EntityChange { .updated(EntityState(entityID: id, state: value, lastChanged: 0)) }

    /// "target event service-or-path".
    func lines(_ commands: [ActivityEngine.Command]) -> [String] {
        commands.map { command in
            var path = ""
            switch command.event {
            case .start(let r), .change(let r, _), .end(let r): path = r.target
            case .changed: path = "-"
            }
            return "\(command.target) \(command.backend) \(command.event.name) \(path)"
        }
    }

    @Test func everyTargetStartsUpdatesAndEnds() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules(backend: "[family, aivi]")))
        let start = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "10")], now: 0).commands
        #expect(lines(start) == [
            "family/notify.mobile_app_me family start notify.mobile_app_me",
            "family/notify.mobile_app_partner family start notify.mobile_app_partner",
            "aivi aivi start /activity/washer",
        ])
        let change = engine.evaluate(changes: [state("sensor.washer_progress", "40")], now: 1).commands
        #expect(lines(change) == [
            "family/notify.mobile_app_me family update -", "family/notify.mobile_app_partner family update -", "aivi aivi update -",
        ])
        // Each target pulls its own payload, in its own backend's shape.
        let partner = engine.payload(activity: "washer", target: "family/notify.mobile_app_partner", kind: .update, now: 2).request
        #expect(partner?.target == "notify.mobile_app_partner" && partner?.body["data"]?["progress"] == 40)
        let aivi = engine.payload(activity: "washer", target: "aivi", kind: .update, now: 2).request
        #expect(aivi?.body["content"]?["progress"]?.doubleValue == 0.4)
        #expect(engine.payload(activity: "washer", target: "nowhere", kind: .update, now: 2).request == nil)
        let end = engine.evaluate(changes: [state("sensor.washer", "idle")], now: 3).commands
        #expect(lines(end).map { $0.split(separator: " ").prefix(3).joined(separator: " ") } == [
            "family/notify.mobile_app_me family end", "family/notify.mobile_app_partner family end", "aivi aivi end",
        ])
    }

    /// While one target has not pulled its update, a change is told again to all (those still waiting count it as
    /// debounced); while all wait, nobody is told.
    @Test func aChangeIsToldAgainOnceAnyTargetHasPulled() throws {
        let text = Self.rules(backend: "[family, aivi]").replacingOccurrences(of: "backends:", with: "defaults: { debounce: 0s }\nbackends:")
        var engine = ActivityEngine(rules: try loadRules(text))
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "10")], now: 0)
        #expect(engine.evaluate(changes: [state("sensor.washer_progress", "20")], now: 1).commands.count == 3)
        #expect(engine.evaluate(changes: [state("sensor.washer_progress", "30")], now: 2).commands.isEmpty)
        _ = engine.payload(activity: "washer", target: "aivi", kind: .update, now: 3)
        #expect(engine.evaluate(changes: [state("sensor.washer_progress", "40")], now: 4).commands.count == 3)
    }

    @Test func aReloadEndsARemovedTargetAndStartsAnAddedOneOnly() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules(backend: "[family, aivi]")))
        _ = engine.evaluate(changes: [state("sensor.washer", "running"), state("sensor.washer_progress", "10")], now: 0)
        let narrowed = engine.reload(try loadRules(Self.rules(backend: "aivi")), now: 1).commands
        #expect(lines(narrowed).filter { !$0.hasSuffix(" update -") } == [
            "family/notify.mobile_app_me family end notify.mobile_app_me",
            "family/notify.mobile_app_partner family end notify.mobile_app_partner",
        ])
        #expect(lines(narrowed).filter { $0.hasSuffix(" update -") } == ["aivi aivi update -"])
        let widened = engine.reload(try loadRules(Self.rules(backend: "[aivi, family]")), now: 2).commands
        #expect(lines(widened) == [
            "aivi aivi update -",
            "family/notify.mobile_app_me family start notify.mobile_app_me",
            "family/notify.mobile_app_partner family start notify.mobile_app_partner",
        ])
    }
}
