import ConnectionTestSupport
@testable import HomeAssistant
import JSON
import Testing

/// The store finds a frame's entity by the bytes of its id (`EntityKeyCache`): what it remembers is exact, and it
/// never outlives a change of the store's keys.
struct EntityKeyCacheTests {
    static func lookup(_ cache: EntityKeyCache<Int>, _ key: String) -> String {
        Array(key.utf8).withUnsafeBufferPointer { bytes in
            switch cache.lookup(bytes) {
            case .kept(let index): "kept \(index)"
            case .notKept: "not kept"
            case .unknown: "unknown"
            }
        }
    }

    static func remember(_ cache: inout EntityKeyCache<Int>, _ key: String, _ index: Int?) {
        Array(key.utf8).withUnsafeBufferPointer { cache.remember($0, index) }
    }

    @Test func whatIsRememberedIsFoundByTheSameBytesOnly() {
        var cache = EntityKeyCache<Int>(seed: 42)
        let keys = (1...64).map { length in String(repeating: "s", count: length - 1) + "x" }
        for (n, key) in keys.enumerated() { Self.remember(&cache, key, n % 3 == 0 ? nil : n) }
        var found = 0
        for (n, key) in keys.enumerated() {
            let answer = Self.lookup(cache, key)
            // Two of the keys may share a slot: the later one is kept there.
            if answer == "unknown" { continue }
            found += 1
            #expect(answer == (n % 3 == 0 ? "not kept" : "kept \(n)"), "\(key.count) bytes")
            // One byte different anywhere, or one byte more or less: not this entry.
            for position in [0, key.count / 2, key.count - 1] {
                var bytes = Array(key.utf8)
                bytes[position] = UInt8(ascii: "y")
                #expect(Self.lookup(cache, String(decoding: bytes, as: UTF8.self)) == "unknown")
            }
            #expect(Self.lookup(cache, key + "x") == "unknown")
        }
        #expect(found >= 60)
        #expect(Self.lookup(cache, "") == "unknown")
    }

    @Test func aKeyLongerThanASlotIsNeverRemembered() {
        var cache = EntityKeyCache<Int>(seed: 7)
        let long = "sensor." + String(repeating: "a", count: EntityKeyCache<Int>.longestKey)
        Self.remember(&cache, long, 1)
        #expect(Self.lookup(cache, long) == "unknown")
        #expect(Self.lookup(cache, String(long.prefix(EntityKeyCache<Int>.longestKey))) == "unknown")
    }

    @Test func twoKeysOfOneSlotTakeItInTurn() throws {
        var cache = EntityKeyCache<Int>(seed: 99)
        // Find two ids of the same length that hash to one slot.
        func slot(_ key: String) -> Int { Array(key.utf8).withUnsafeBufferPointer { EntityKeyCache<Int>.slot(of: $0, seed: 99) } }
        var seen: [Int: String] = [:]
        var pair: (String, String)?
        for n in 0..<100_000 {
            let key = "sensor.e\(n)"
            if let other = seen[slot(key)], other.utf8.count == key.utf8.count { pair = (other, key); break }
            seen[slot(key)] = key
        }
        let (a, b) = try #require(pair)
        Self.remember(&cache, a, 1)
        #expect(Self.lookup(cache, a) == "kept 1")
        #expect(Self.lookup(cache, b) == "unknown")
        Self.remember(&cache, b, 2)
        #expect(Self.lookup(cache, b) == "kept 2")
        #expect(Self.lookup(cache, a) == "unknown")
    }

    @Test func emptiedItForgetsEverything() {
        var cache = EntityKeyCache<Int>(seed: 1)
        for n in 0..<100 { Self.remember(&cache, "light.l\(n)", n) }
        cache.removeAll()
        for n in 0..<100 { #expect(Self.lookup(cache, "light.l\(n)") == "unknown") }
    }

    @Test func theSlotDependsOnTheSeed() {
        let keys = (0..<64).map { Array("sensor.e\($0)".utf8) }
        let one = keys.map { key in key.withUnsafeBufferPointer { EntityKeyCache<Int>.slot(of: $0, seed: 1) } }
        let other = keys.map { key in key.withUnsafeBufferPointer { EntityKeyCache<Int>.slot(of: $0, seed: 2) } }
        #expect(one != other)
        #expect(Set(one).count > 50)
    }

    // MARK: - The store

    static func event(_ body: String) -> String { #"{"type":"event","event":\#(body),"id":7}"# }

    /// Diff frames between additions, removals, snapshots and selections (the dictionary grows, shrinks and is
    /// replaced, so every index it gave goes stale): read in place with what the store remembers, the states are
    /// always those of the general path, and nothing traps on a stale index.
    @Test(arguments: [1, 2, 3, 4])
    func framesBetweenAdditionsRemovalsAndSnapshotsAgreeWithTheGeneralPath(_ seed: UInt64) throws {
        var random = SeededRandom(state: seed)
        let ids = (0..<60).map { n in n % 2 == 0 ? "sensor.e\(n)" : "sensor.a_much_longer_entity_id_\(n)_x" } + ["light.l\\u0031"]
        var fast = EntityStore(), general = EntityStore()
        func snapshot() -> String {
            let some = ids.filter { _ in Bool.random(using: &random) }
            return "{" + #""a":{"# + some.map { #""\#($0)":{"s":"0"}"# }.joined(separator: ",") + "}}"
        }
        let first = snapshot()
        _ = try fast.replace(withSnapshot: JSONText(first))
        _ = try general.replace(withSnapshot: JSONText(first))
        for step in 0..<2_000 {
            let id = ids.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<70:
                let frame = Array(Self.event(#"{"c":{"\#(id)":{"+":{"s":"\#(step)","a":{"t":\#(step)}}}}}"#).utf8)
                var changes: [EntityChange] = []
                #expect(frame.withUnsafeBufferPointer { fast.applyDiffFrame($0, subscriptionID: 7, into: &changes) })
                let expected = try general.apply(JSONText(#"{"c":{"\#(id)":{"+":{"s":"\#(step)","a":{"t":\#(step)}}}}}"#))
                #expect(changes == expected, "step \(step)")
            case 70..<82:
                let added = #"{"a":{"\#(id)":{"s":"added \#(step)"}}}"#
                #expect(try fast.apply(JSONText(added)) == general.apply(JSONText(added)))
            case 82..<94:
                let removed = #"{"r":["\#(id)"]}"#
                #expect(try fast.apply(JSONText(removed)) == general.apply(JSONText(removed)))
            case 94..<97:
                let next = snapshot()
                #expect(try fast.replace(withSnapshot: JSONText(next)) == general.replace(withSnapshot: JSONText(next)))
            default:
                let kept = ids.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }.sorted()
                fast.share(entityIDs: kept)
                general.share(entityIDs: kept)
            }
            #expect(fast.states == general.states, "step \(step)")
        }
    }
}
