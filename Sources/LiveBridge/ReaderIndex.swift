import Rules
import HomeAssistant

/// Which activities read each entity, by entity id. Nearly every entity has one reader, so that one is kept inline, as
/// a position in the rules' activities, and only entities several activities read get a list: a list (or an id) per
/// entity would cost more than the index itself. Rules that iterate a domain (`states.light`) or read every entity
/// (`expand`, `states`) are kept apart, by domain and in one list. One table by entity id: a change costs one hash.
struct ReaderIndex: Sendable {
    /// An entity's first reader, and where the others are in `lists` (-1: none).
    private struct Readers: Sendable {
        var first: Int32
        var others: Int32 = -1
    }
    private var byEntity: [String: Readers] = [:]
    private var lists: [[Int32]] = []
    private var byDomain: [String: [Int32]] = [:]
    private var ofEverything: [Int32] = []

    init(_ activities: [ActivityRule]) {
        for (position, rule) in zip(Int32(0)..., activities) {
            let reads = rule.reads
            if reads.everything { ofEverything.append(position); continue }
            for domain in reads.domains { byDomain[domain, default: []].append(position) }
            for entity in reads.entityIDs {
                guard var readers = byEntity[entity] else {
                    byEntity[entity] = Readers(first: position)
                    continue
                }
                if readers.others < 0 {
                    readers.others = Int32(lists.count)
                    lists.append([])
                    byEntity[entity] = readers
                }
                lists[Int(readers.others)].append(position)
            }
        }
    }

    /// Calls `body` with the position (in the rules' activities) of each activity that reads `entity`, once each:
    /// those naming it in rule order, then those iterating its domain, then those reading everything.
    /// Nothing is allocated for the usual entity, which only rules naming it read.
    func forEachReader(of entity: String, _ body: (Int) -> Void) {
        let named = byEntity[entity]
        let others = named.flatMap { $0.others < 0 ? nil : lists[Int($0.others)] }
        if let named { body(Int(named.first)) }
        for position in others ?? [] { body(Int(position)) }
        if !byDomain.isEmpty, let dot = entity.firstIndex(of: "."), let readers = byDomain[String(entity[..<dot])] {
            for position in readers where position != named?.first && !(others?.contains(position) ?? false) {
                body(Int(position))
            }
        }
        for position in ofEverything { body(Int(position)) }
    }
}
