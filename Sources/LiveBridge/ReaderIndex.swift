import Rules
import HomeAssistant

/// Which activities read each entity, by entity id. Nearly every entity has one reader, so that one is kept inline, as
/// a position in the rules' activities, and only entities several activities read get a list: a list (or an id) per
/// entity would cost more than the index itself. Rules that iterate a domain (`states.light`) or read every entity
/// (`expand`, `states`) are kept apart, by domain and in one list.
struct ReaderIndex: Sendable {
    private var first: [String: Int32] = [:]
    private var others: [String: [Int32]] = [:]
    private var byDomain: [String: [Int32]] = [:]
    private var ofEverything: [Int32] = []

    init(_ activities: [ActivityRule]) {
        for (position, rule) in zip(Int32(0)..., activities) {
            let reads = rule.reads
            if reads.everything { ofEverything.append(position); continue }
            for domain in reads.domains { byDomain[domain, default: []].append(position) }
            for entity in reads.entityIDs {
                if first[entity] == nil { first[entity] = position } else { others[entity, default: []].append(position) }
            }
        }
    }

    /// Calls `body` with the position (in the rules' activities) of each activity that reads `entity`, once each:
    /// those naming it in rule order, then those iterating its domain, then those reading everything.
    /// Nothing is allocated for the usual entity, which only rules naming it read.
    func forEachReader(of entity: String, _ body: (Int) -> Void) {
        let first = first[entity]
        let others = others[entity]
        if let first { body(Int(first)) }
        for position in others ?? [] { body(Int(position)) }
        if !byDomain.isEmpty, let dot = entity.firstIndex(of: "."), let readers = byDomain[String(entity[..<dot])] {
            for position in readers where position != first && !(others?.contains(position) ?? false) {
                body(Int(position))
            }
        }
        for position in ofEverything { body(Int(position)) }
    }
}
