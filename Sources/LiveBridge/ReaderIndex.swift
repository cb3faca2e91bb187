import Rules
import HomeAssistant

/// Which activities read each entity, by entity id. Nearly every entity has one reader, so that one is kept inline, as
/// a position in the rules' activities, and only entities several activities read get a list: a list (or an id) per
/// entity would cost more than the index itself. Rules that iterate a domain (`states.light`) or read every entity
/// (`expand`, `states`) are kept apart, by domain and in one list. A change's id is found by its instance first
/// (`ReaderIndex.Instances`), by its text only when that misses.
struct ReaderIndex: Sendable {
    /// An entity's first reader, and where the others are in `others` (`otherCount` of them from `otherStart`).
    fileprivate struct Readers: Sendable {
        var first: Int32
        var otherStart: Int32 = 0
        var otherCount: Int32 = 0
    }
    private var byEntity: [String: Readers] = [:]
    /// The same entities by the id's instance: no hash of its text.
    private var byInstance = Instances()
    /// Every entity's other readers, one run per entity: one flat list, so a lookup copies no array (a list per
    /// entity was a retain and release of it per change).
    private var others: [Int32] = []
    private var byDomain: [String: [Int32]] = [:]
    private var ofEverything: [Int32] = []

    init(_ activities: [ActivityRule]) {
        var named: [String: [Int32]] = [:]
        var order: [String] = []
        for (position, rule) in zip(Int32(0)..., activities) {
            let reads = rule.reads
            if reads.everything { ofEverything.append(position); continue }
            for domain in reads.domains { byDomain[domain, default: []].append(position) }
            for entity in reads.entityIDs {
                if named[entity] == nil { order.append(entity) }
                named[entity, default: []].append(position)
            }
        }
        for entity in order {
            let list = named[entity]!
            byEntity[entity] = Readers(first: list[0], otherStart: Int32(others.count), otherCount: Int32(list.count - 1))
            others += list.dropFirst()
        }
        byInstance = Instances(byEntity)
    }

    /// Calls `body` with the position (in the rules' activities) of each activity that reads `entity`, once each:
    /// those naming it in rule order, then those iterating its domain, then those reading everything.
    /// Nothing is allocated or copied for the usual entity, which only rules naming it read.
    func forEachReader(of entity: String, _ body: (Int) -> Void) {
        let named = byInstance.readers(of: entity) ?? byEntity[entity]
        if let named {
            body(Int(named.first))
            for index in Int(named.otherStart)..<Int(named.otherStart + named.otherCount) { body(Int(others[index])) }
        }
        if !byDomain.isEmpty, let dot = entity.firstIndex(of: "."), let readers = byDomain[String(entity[..<dot])] {
            for position in readers where !(named.map { $0.first == position || isOther(position, of: $0) } ?? false) {
                body(Int(position))
            }
        }
        for index in ofEverything.indices { body(Int(ofEverything[index])) }
    }

    private func isOther(_ position: Int32, of readers: Readers) -> Bool {
        others[Int(readers.otherStart)..<Int(readers.otherStart + readers.otherCount)].contains(position)
    }

    /// The named entities' readers, found by comparing the id's two words rather than hashing its text (SipHash and a
    /// comparison: ~400 instructions a change). The store hands back the rules' own instance of a watched id
    /// (`EntityStore.share`), and an id of up to 15 bytes is held inside the `String` itself, so the id a change
    /// carries is, word for word, the one the rules named. Another instance of the same text misses here and is
    /// found by text. Built once from the rules, at most half full (open addressing, linear probing). The index's
    /// `byEntity` holds the same ids, unchanged after it is built, so no instance's address is reused while it is a key.
    fileprivate struct Instances: Sendable {
        private struct Slot: Sendable {
            var words: (UInt64, UInt64) = (0, 0)
            var readers = Readers(first: -1)
            var isUsed = false
        }
        private var slots: [Slot] = []

        init() {}

        init(_ byEntity: [String: Readers]) {
            guard !byEntity.isEmpty else { return }
            var capacity = 8
            while capacity < byEntity.count * 2 { capacity *= 2 }
            slots = Array(repeating: Slot(), count: capacity)
            for id in byEntity.keys {
                let words = Self.words(of: id)
                var slot = Self.start(words, capacity - 1)
                while slots[slot].isUsed { slot = (slot + 1) & (capacity - 1) }
                slots[slot] = Slot(words: words, readers: byEntity[id]!, isUsed: true)
            }
        }

        func readers(of id: String) -> Readers? {
            let words = Self.words(of: id)
            return slots.withUnsafeBufferPointer { slots in
                guard !slots.isEmpty else { return nil }
                let mask = slots.count - 1
                var slot = Self.start(words, mask)
                while slots[slot].isUsed {
                    if slots[slot].words == words { return slots[slot].readers }
                    slot = (slot + 1) & mask
                }
                return nil
            }
        }

        /// The `String`'s two words as they are (no retain): equal words are the same instance or the same inline text.
        private static func words(of id: String) -> (UInt64, UInt64) { unsafeBitCast(id, to: (UInt64, UInt64).self) }

        private static func start(_ words: (UInt64, UInt64), _ mask: Int) -> Int {
            var mixed = words.0 ^ (words.1 &* 0x9E37_79B9_7F4A_7C15)
            mixed ^= mixed >> 29
            mixed &*= 0xBF58_476D_1CE4_E5B9
            mixed ^= mixed >> 32
            return Int(truncatingIfNeeded: mixed) & mask
        }
    }
}
