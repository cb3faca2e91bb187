import Foundation
import HomeAssistant
import LiveBridge
import Rules
import Testing
import LiveActivity
import JSON
import Dispatcher
import ConnectionTestSupport

/// From an independent review's attack: the daemon's lending mode (store changed in place, changes as ids, engine reading the store) must
/// tell exactly what the old mode (changes carrying states, engine keeping its own table) tells.
struct LendingDifferentialTests {
    static let rules = """
        backends:
          aivi: { type: aivi, token: t }
        defaults: { debounce: 0s }
        activities:
          everything:
            active_when: "{{ states | list | count > 1 }}"
            template: generic
            state: "{{ states | map(attribute='entity_id') | join(',') }}#{{ states | map(attribute='state') | join(',') }}"
            progress: 0.5
          sensors:
            active_when: "{{ states.sensor | selectattr('state', 'eq', '1') | list | count > 0 }}"
            template: generic
            state: "{{ states.sensor | map(attribute='entity_id') | join(',') }}#{% for s in states.sensor %}{{ s.attributes | tojson }}{{ s.last_changed }}{{ s.last_updated }};{% endfor %}"
            progress: 0.5
          one:
            active_when: "{{ state_attr('sensor.a', 't') is not none }}"
            template: generic
            state: "{{ state_attr('sensor.a', 't') }}/{{ state_attr('sensor.a', 'u') }}/{{ states('sensor.a') }}/{{ states.sensor.a.attributes | tojson if states.sensor.a else 'none' }}"
            progress: 0.5
          lights:
            active_when: "{{ states.light | list | count > 0 }}"
            template: generic
            state: "{% for s in states.light %}{{ s.entity_id }}={{ s.state }}{{ s.attributes | tojson }};{% endfor %}"
            progress: 0.5
        """

    /// The same rules, every iteration sorted by id: what they tell does not depend on the order.
    static let sortedRules = rules
        .replacingOccurrences(of: "states | map(attribute='entity_id') | join(',') }}#{{ states | map(attribute='state') | join(',') }}",
                              with: "(states | sort(attribute='entity_id')) | map(attribute='entity_id') | join(',') }}#{{ (states | sort(attribute='entity_id')) | map(attribute='state') | join(',') }}")
        .replacingOccurrences(of: "states.sensor | map(attribute='entity_id') | join(',')", with: "states.sensor | map(attribute='entity_id') | sort | join(',')")
        .replacingOccurrences(of: "for s in states.sensor %}", with: "for s in states.sensor | sort(attribute='entity_id') %}")
        .replacingOccurrences(of: "for s in states.light %}", with: "for s in states.light | sort(attribute='entity_id') %}")


    /// The store the lent engine reads (as the connection's, confined to one thread here: the test's).
    final class Box: @unchecked Sendable {
        var store = EntityStore()
        init() { store.isLent = true }
    }

    typealias Random = SeededRandom

    static let ids = ["sensor.a", "sensor.b", "sensor.c", "sensor.d", "light.x", "light.y", "switch.z"]
    static let names = ["t", "u", "v", "w", "zz"]

    static func value(_ r: inout Random) -> String {
        switch r.int(6) {
        case 0: return String(r.int(5))
        case 1: return "\"" + r.pick(["on", "off", "x", "1", ""]) + "\""
        case 2: return "[1,{\"k\":\(r.int(3))}]"
        case 3: return "{\"n\":\"\(r.int(3))\"}"
        case 4: return "null"
        default: return "\(Double(r.int(100)) / 4)"
        }
    }

    static func attributes(_ r: inout Random, repeats: Bool = true) -> String {
        var members: [String] = []
        for _ in 0..<r.int(5) { members.append("\"\(r.pick(names))\":\(value(&r))") }
        if repeats, r.chance(20), let first = members.first { members.append(first.split(separator: ":")[0] + ":" + value(&r)) }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func full(_ r: inout Random) -> String {
        var parts = ["\"s\":\"\(r.int(3))\""]
        if r.chance(80) { parts.append("\"a\":" + attributes(&r)) }
        parts.append("\"lc\":\(1_795_343_000 + r.int(100))")
        if r.chance(30) { parts.append("\"lu\":\(1_795_343_200 + r.int(100))") }
        parts.shuffle(using: &r)
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func diff(_ r: inout Random) -> String {
        var plus: [String] = []
        if r.chance(60) { plus.append("\"s\":\"\(r.int(3))\"") }
        if r.chance(20) { plus.append("\"s\":\"\(r.int(3))\"") }
        if r.chance(20) { plus.append("\"lc\":\(1_795_343_100 + r.int(100))") }
        if r.chance(20) { plus.append("\"lu\":\(1_795_343_300 + r.int(100))") }
        if r.chance(70) { plus.append("\"a\":" + attributes(&r)) }
        if r.chance(10) { plus.append("\"a\":" + attributes(&r)) }
        var parts: [String] = []
        if !plus.isEmpty || r.chance(50) { parts.append("\"+\":{" + plus.joined(separator: ",") + "}") }
        if r.chance(30) {
            let gone = (0..<(1 + r.int(2))).map { _ in "\"\(r.pick(names + ["nope"]))\"" }
            parts.append("\"-\":{\"a\":[" + gone.joined(separator: ",") + "]}")
        }
        parts.shuffle(using: &r)
        return "{" + parts.joined(separator: ",") + "}"
    }

    enum Op: CustomStringConvertible {
        case snapshot(String), event(String), frame(String), set(String, JSONValue)
        var description: String {
            switch self {
            case .snapshot(let s): "snapshot \(s)"
            case .event(let s): "event \(s)"
            case .frame(let s): "frame \(s)"
            case .set(let id, let v): "set \(id) \(v.jsonText)"
            }
        }
    }

    static func op(_ r: inout Random, first: Bool) -> Op {
        if first || r.chance(8) {
            let members = r.subset(ids).map { "\"\($0)\":" + full(&r) }
            return .snapshot("{\"a\":{" + members.joined(separator: ",") + "}}")
        }
        switch r.int(10) {
        case 0...4:
            var parts: [String] = []
            if r.chance(40) {
                var members = r.subset(ids).map { "\"\($0)\":" + full(&r) }
                if r.chance(15), let one = members.first { members.append(one) }
                parts.append("\"a\":{" + members.joined(separator: ",") + "}")
            }
            if r.chance(70) {
                var members = r.subset(ids).map { "\"\($0)\":" + diff(&r) }
                if r.chance(15), let one = members.first { members.append(String(one.split(separator: ":")[0]) + ":" + diff(&r)) }
                parts.append("\"c\":{" + members.joined(separator: ",") + "}")
            }
            if r.chance(35) { parts.append("\"r\":[" + r.subset(ids).map { "\"\($0)\"" }.joined(separator: ",") + "]") }
            parts.shuffle(using: &r)
            return .event("{" + parts.joined(separator: ",") + "}")
        case 5...8:
            let messages = (0..<(1 + r.int(4))).map { _ in
                #"{"type":"event","event":{"c":{"\#(r.pick(ids))":\#(diff(&r))}},"id":7}"#
            }
            return .frame(messages.count == 1 ? messages[0] : "[" + messages.joined(separator: ",") + "]")
        default:
            let id = r.pick(ids)
            if r.chance(30) { return .set(id, .null) }
            return .set(id, ["state": .string(String(r.int(3))), "attributes": .object(["t": .int(r.int(3))]),
                             "last_changed": "2026-11-27T12:00:00+00:00"])
        }
    }

    /// Applies an op to both stores; the changes each gives (old: with states; lending: ids).
    static func apply(_ op: Op, old: inout EntityStore, lending: inout EntityStore) throws -> (old: [EntityChange], lent: [EntityChange]) {
        switch op {
        case .snapshot(let text):
            return (try old.replace(withSnapshot: JSONText(text)), try lending.replace(withSnapshot: JSONText(text)).map(\.withoutState))
        case .event(let text):
            return (try old.apply(JSONText(text)), try lending.apply(JSONText(text)).map(\.withoutState))
        case .frame(let text):
            var a: [EntityChange] = [], b: [EntityChange] = []
            let bytes = Array(text.utf8)
            let takenA = bytes.withUnsafeBufferPointer { old.applyDiffFrame($0, subscriptionID: 7, into: &a) }
            let takenB = bytes.withUnsafeBufferPointer { lending.applyDiffFrame($0, subscriptionID: 7, into: &b) }
            #expect(takenA && takenB, "frame not taken: \(text)")
            return (a, b)
        case .set(let id, let value):
            return (old.set(id, fullState: value), lending.set(id, fullState: value).map(\.withoutState))
        }
    }

    /// Each command with its body (a change marked for the dispatcher rendered at once, as a pull would).
    static func told(_ engine: inout ActivityEngine, _ commands: [ActivityEngine.Command]) -> [String] {
        commands.map { command in
            let body: JSONValue? = switch command.event {
            case .start(let request), .change(let request, _), .end(let request): request.body
            case .changed: engine.payload(activity: command.activity, target: command.target, kind: .update, now: 0).request?.body
            }
            return "\(command.activity) \(command.event.name) \(body?.jsonText ?? "-")"
        }
    }

    static func fingerprint(_ states: [String: EntityState]) -> [String: String] {
        states.mapValues { "\($0.jsonLine)|\($0.attributes.dictionary.count)" }
    }

    /// Random histories, each change handed on at once: the same states, order, commands and payloads.
    @Test(arguments: 0..<30)
    func aLentEngineTellsWhatAnEngineOfItsOwnTableTells(_ seed: Int) throws {
        var r = Random(state: UInt64(seed) &* 7919 &+ 17)
        let rules = try loadRules(Self.rules)
        let box = Box()
        var oldStore = EntityStore()
        var own = ActivityEngine(rules: rules)
        var lent = ActivityEngine(rules: rules, lender: .init { (box.store.states, box.store.order) })
        // States (and whole tables) held by someone else while the store goes on: never changed under them.
        var held: [(states: [String: EntityState], print: [String: String], step: Int)] = []
        var heldOne: [(state: EntityState, line: String)] = []
        var history: [String] = []
        for step in 0..<60 {
            // The grace's end, while both engines have taken every change (the lent one would otherwise read a
            // store ahead of them: see LendingWindowTests).
            let ownReleased = Self.told(&own, own.releaseHeldEnds(now: Double(step)).commands)
            let lentReleased = Self.told(&lent, lent.releaseHeldEnds(now: Double(step)).commands)
            #expect(ownReleased == lentReleased, "released differ at \(step)")
            let op = Self.op(&r, first: step == 0)
            history.append(op.description)
            let (oldChanges, lentChanges) = try Self.apply(op, old: &oldStore, lending: &box.store)
            #expect(oldChanges.map(\.withoutState) == lentChanges, "changes differ at \(step): \(history.joined(separator: "\n"))")
            #expect(oldStore.states == box.store.states, "stores differ at \(step): \(history.joined(separator: "\n"))")
            #expect(oldStore.order == box.store.order, "store orders differ at \(step)")
            // The restart grace, now and then (as a snapshot starts it), released once over.
            let now = Double(step)
            if case .snapshot = op, r.chance(50) {
                own.holdEnds(until: now + 5)
                lent.holdEnds(until: now + 5)
            }
            let ownTold = Self.told(&own, own.evaluate(changes: oldChanges, now: now).commands)
            let lentTold = Self.told(&lent, lent.evaluate(changes: lentChanges, now: now).commands)
            #expect(own.heldActivities == lent.heldActivities, "held differ at \(step)")
            #expect(ownTold == lentTold, "commands differ at \(step):\n\(history.joined(separator: "\n"))")
            #expect(own.states == lent.states, "engine states differ at \(step)")
            if ownTold != lentTold || own.states != lent.states { return }
            for (states, print, at) in held { #expect(Self.fingerprint(states) == print, "a table held since \(at) changed under its holder") }
            for (state, line) in heldOne { #expect(state.jsonLine == line, "a held state changed under its holder") }
            // Holds let go after a while (or never taken, half the seeds): the store is then its states' only holder
            // and diffs change them in place.
            held.removeAll { $0.step < step - 2 }
            if heldOne.count > 2 { heldOne.removeFirst() }
            if seed % 2 == 0, r.chance(20) { held.append((box.store.states, Self.fingerprint(box.store.states), step)) }
            if seed % 2 == 0, r.chance(30), let one = box.store.states.values.randomElement(using: &r) { heldOne.append((one, one.jsonLine)) }
        }
        // The order a template sees: the store's (own engine: its own take of it).
        let everything = Self.told(&own, own.evaluate(ids: ["everything"], now: 0).commands)
        _ = everything
    }

    /// The same histories, the consumer behind: the changes go through a feed each (coalesced) and are taken now and
    /// then. The states the engines read once a batch is taken are the stores'; what they tell is compared.
    @Test(arguments: 0..<30)
    func aLentEngineBehindTellsWhatAnEngineOfItsOwnTableTells(_ seed: Int) async throws {
        var r = Random(state: UInt64(seed) &* 104_729 &+ 3)
        #expect(Self.sortedRules != Self.rules)
        let rules = try loadRules(Self.sortedRules)
        let box = Box()
        var oldStore = EntityStore()
        var own = ActivityEngine(rules: rules)
        var lent = ActivityEngine(rules: rules, lender: .init { (box.store.states, box.store.order) })
        let oldFeed = EntityChangeFeed(), lentFeed = EntityChangeFeed()
        var history: [String] = []
        var orderDiffs = 0
        for step in 0..<80 {
            let op = Self.op(&r, first: step == 0)
            history.append(op.description)
            let (oldChanges, lentChanges) = try Self.apply(op, old: &oldStore, lending: &box.store)
            oldFeed.publish(oldChanges)
            lentFeed.publish(lentChanges)
            guard r.chance(30) || step == 79 else { continue }
            // Drain both (published nothing? next() would wait: only when something is pending).
            let oldBatch = await Self.drain(oldFeed)
            let lentBatch = await Self.drain(lentFeed)
            let ownTold = Self.told(&own, own.evaluate(changes: oldBatch, now: 0).commands)
            let lentTold = Self.told(&lent, lent.evaluate(changes: lentBatch, now: 0).commands)
            #expect(own.states == lent.states, "engine states differ at \(step):\n\(history.joined(separator: "\n"))")
            #expect(oldStore.order == box.store.order)
            if ownTold != lentTold {
                orderDiffs += 1
                Issue.record("commands differ at \(step): own \(ownTold) lent \(lentTold)\n\(history.joined(separator: "\n"))")
                return
            }
        }
    }

    static func drain(_ feed: EntityChangeFeed) async -> [EntityChange] {
        // Something is pending whenever a change was published since the last drain; publish nothing otherwise.
        feed.publish([.removed(entityID: "none.marker")])
        var batch = await feed.next() ?? []
        batch.removeAll { $0 == .removed(entityID: "none.marker") }
        return batch
    }
}

extension SeededRandom {
    fileprivate mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    fileprivate mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    fileprivate mutating func pick<T>(_ from: [T]) -> T { from[int(from.count)] }
    fileprivate mutating func subset<T>(_ from: [T]) -> [T] {
        var out = from.filter { _ in chance(50) }
        for i in out.indices.reversed() { out.swapAt(i, int(i + 1)) }
        return out
    }
}
