import Foundation
import HomeAssistant
@testable import LiveBridge
import Rules
import Testing

/// Which activities a change reaches: found by the id's instance (the rules' own, or an inline id) and by its text
/// alike, named readers in rule order, then a domain's, then those reading everything, each once.
struct ReaderIndexTests {
    /// Short ids (held inside the `String`) and long ones (an instance of their own), read by one activity or
    /// several, beside activities iterating a domain and reading everything.
    static func rulesText(named: Int) -> String {
        var text = "backends:\n  aivi: { type: aivi, token: t }\nactivities:\n"
        for n in 0..<named {
            let short = "sensor.s\(n % 7)"
            let long = "sensor.a_rather_long_entity_id_\(n % 11)"
            let light = "light.l\(n % 5)"
            text += "  a\(n):\n    active_when: \"{{ is_state('\(short)', 'on') }}\"\n    template: generic\n"
            text += "    progress: \"{{ states('\(long)') | float(0) + states('\(light)') | float(0) }}\"\n"
        }
        text += "  lights:\n    active_when: \"{{ states.light | count > 0 }}\"\n    template: generic\n    progress: 0.5\n"
        text += "  everything:\n    active_when: \"{{ states | count > 0 }}\"\n    template: generic\n    progress: 0.5\n"
        return text
    }

    /// The readers of `id` worked out the long way from each rule's reads.
    static func expected(_ id: String, _ activities: [ActivityRule]) -> [Int] {
        var out: [Int] = []
        for (position, rule) in activities.enumerated() where !rule.reads.everything && rule.reads.entityIDs.contains(id) {
            out.append(position)
        }
        let domain = String(id.prefix { $0 != "." })
        for (position, rule) in activities.enumerated()
        where !rule.reads.everything && rule.reads.domains.contains(domain) && !out.contains(position) {
            out.append(position)
        }
        for (position, rule) in activities.enumerated() where rule.reads.everything { out.append(position) }
        return out
    }

    static func found(_ index: ReaderIndex, _ id: String) -> [Int] {
        var out: [Int] = []
        index.forEachReader(of: id) { out.append($0) }
        return out
    }

    /// A copy of the text in storage of its own: equal, but not the rules' instance.
    static func otherInstance(_ id: String) -> String {
        var copy = String(decoding: Array(id.utf8), as: UTF8.self)
        copy.reserveCapacity(64)
        return copy
    }

    @Test func theRulesInstanceAnotherInstanceAndTheTextFindTheSameReaders() throws {
        let activities = try loadRules(Self.rulesText(named: 40)).activities
        let index = ReaderIndex(activities)
        let named = Set(activities.flatMap { $0.reads.entityIDs })
        #expect(named.contains { $0.utf8.count > 15 } && named.contains { $0.utf8.count <= 15 })
        for rule in activities {
            for id in rule.reads.entityIDs {
                let expected = Self.expected(id, activities)
                #expect(!expected.isEmpty)
                #expect(Self.found(index, id) == expected, "\(id), the rules' instance")
                #expect(Self.found(index, Self.otherInstance(id)) == expected, "\(id), another instance")
            }
        }
    }

    @Test func anIdNoRuleNamesReachesItsDomainsReadersAndEverythingsOnly() throws {
        let activities = try loadRules(Self.rulesText(named: 40)).activities
        let index = ReaderIndex(activities)
        for id in ["light.unnamed", "sensor.unnamed", "sensor.a_rather_long_entity_id_99", "switch.x", "nodot", ""] {
            #expect(Self.found(index, id) == Self.expected(id, activities), "\(id)")
            #expect(Self.found(index, Self.otherInstance(id)) == Self.expected(id, activities), "\(id), another instance")
        }
        #expect(Self.found(index, "light.unnamed") == [activities.count - 2, activities.count - 1])
    }

    /// Many named entities (the table grows and its probes wrap): every one is found, and nothing else is.
    @Test func aThousandNamedEntitiesAreEachFoundOnce() throws {
        var text = "backends:\n  aivi: { type: aivi, token: t }\nactivities:\n"
        for n in 0..<1_000 {
            text += "  a\(n):\n    active_when: \"{{ is_state('sensor.e\(n)', 'on') or is_state('binary_sensor.a_long_id_number_\(n)', 'on') }}\"\n    template: generic\n    progress: 0.5\n"
        }
        let activities = try loadRules(text).activities
        let index = ReaderIndex(activities)
        for n in 0..<1_000 {
            #expect(Self.found(index, "sensor.e\(n)") == [n])
            #expect(Self.found(index, Self.otherInstance("binary_sensor.a_long_id_number_\(n)")) == [n])
        }
        for rule in activities.prefix(50) {
            for id in rule.reads.entityIDs { #expect(Self.found(index, id).count == 1) }
        }
        #expect(Self.found(index, "sensor.e1000").isEmpty)
        #expect(Self.found(ReaderIndex([]), "sensor.e1").isEmpty)
    }
}
