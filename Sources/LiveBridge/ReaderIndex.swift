import Rules
import HomeAssistant

/// Which activities read each entity, by entity id. Nearly every entity has one reader, so that one is kept inline, as
/// a position in the rules' activities, and only entities several activities read get a list: a list (or an id) per
/// entity would cost more than the index itself. Rules that iterate a domain (`states.light`) or read every entity
/// (`expand`, `states`) are kept apart, by domain and in one list. One table by entity id: a change costs one hash.
struct ReaderIndex: Sendable {
    /// An entity's first reader, and where the others are in `others` (`otherCount` of them from `otherStart`).
    private struct Readers: Sendable {
        var first: Int32
        var otherStart: Int32 = 0
        var otherCount: Int32 = 0
    }
    private var byEntity: [String: Readers] = [:]
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
    }

    /// Calls `body` with the position (in the rules' activities) of each activity that reads `entity`, once each:
    /// those naming it in rule order, then those iterating its domain, then those reading everything.
    /// Nothing is allocated or copied for the usual entity, which only rules naming it read.
    func forEachReader(of entity: String, _ body: (Int) -> Void) {
        let named = byEntity[entity]
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
}
