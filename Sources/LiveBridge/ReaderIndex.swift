import Rules

/// Which activities read each entity, by entity id. Nearly every entity has one reader, so that one is kept inline and
/// only entities several activities read get a list: a list per entity would cost more than the index itself.
struct ReaderIndex: Sendable {
    private var first: [String: String] = [:]
    private var others: [String: [String]] = [:]

    init(_ activities: [ActivityRule]) {
        for rule in activities {
            for entity in rule.entityIDs {
                if first[entity] == nil { first[entity] = rule.id } else { others[entity, default: []].append(rule.id) }
            }
        }
    }

    /// Calls `body` with the id of each activity that reads `entity`, in rule order.
    func forEachReader(of entity: String, _ body: (String) -> Void) {
        guard let first = first[entity] else { return }
        body(first)
        for id in others[entity] ?? [] { body(id) }
    }
}
