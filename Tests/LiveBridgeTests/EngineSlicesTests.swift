import Dispatcher
import Foundation
import HomeAssistant
import LiveBridge
import Platform
import Rules
import Testing

/// The engine's evaluation in parts, which lets the socket be read between them when templates are slow.
struct EngineSlicesTests {
    /// Twenty activities reading one entity, each started by it.
    static let rules = "backends:\n  aivi: { type: aivi, token: t }\nactivities:\n" + (0..<20).map { n in
        "  a\(n):\n    active_when: \"{{ states('sensor.load') | int > \(n) }}\"\n    template: generic\n    progress: 0.5\n"
    }.joined()

    static let noDeadline: SliceDeadline? = nil


    func changes(load value: String) -> [EntityChange] { [.updated(EntityState(entityID: "sensor.load", state: value, lastChanged: 0))] }

    /// Past its deadline, each part evaluates one activity; the parts together start what one evaluation starts.
    @Test func partsPastTheirDeadlineAddUpToTheWhole() throws {
        let rules = try loadRules(Self.rules)
        var whole = ActivityEngine(rules: rules)
        let expected = whole.evaluate(changes: changes(load: "100"), now: 0).commands.map { "\($0.activity) \($0.event.name)" }
        #expect(expected.count == 20)

        var sliced = ActivityEngine(rules: rules)
        var evaluation = sliced.evaluation(taking: changes(load: "100"))
        var parts: [[String]] = []
        while !evaluation.isFinished {
            let part = sliced.continueEvaluating(&evaluation, now: 0, until: SliceDeadline(after: .seconds(-1)))
            parts.append(part.commands.map { "\($0.activity) \($0.event.name)" })
        }
        #expect(parts.map(\.count) == Array(repeating: 1, count: 20))
        #expect(parts.flatMap { $0 } == expected)
        // Without a deadline: all at once.
        var once = ActivityEngine(rules: rules)
        var all = once.evaluation(taking: changes(load: "100"))
        #expect(once.continueEvaluating(&all, now: 0, until: Self.noDeadline).commands.count == 20)
        #expect(all.isFinished)
    }

    /// A reload between parts: the rest of the old evaluation is dropped (its positions belong to the old rules), as
    /// the reload evaluated every activity under the new ones.
    @Test func aReloadBetweenPartsDropsTheRest() throws {
        var engine = ActivityEngine(rules: try loadRules(Self.rules))
        var evaluation = engine.evaluation(taking: changes(load: "100"))
        #expect(engine.continueEvaluating(&evaluation, now: 0, until: SliceDeadline(after: .seconds(-1))).commands.count == 1)
        let fewer = try loadRules("backends:\n  aivi: { type: aivi, token: t }\nactivities:\n  a0:\n    active_when: \"{{ true }}\"\n    template: generic\n    progress: 0.5\n")
        _ = engine.reload(fewer, now: 0)
        #expect(engine.continueEvaluating(&evaluation, now: 0, until: Self.noDeadline).commands.isEmpty)
        #expect(evaluation.isFinished)
    }
}
