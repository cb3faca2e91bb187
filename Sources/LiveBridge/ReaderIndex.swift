import Rules

/// Which activities read each entity, by entity id. Nearly every entity has one reader, so that one is kept inline, as
/// a position in the rules' activities, and only entities several activities read get a list: a list (or an id) per
/// entity would cost more than the index itself.
struct ReaderIndex: Sendable {
    private let activityIDs: [String]
    private var first: [String: Int32] = [:]
    private var others: [String: [Int32]] = [:]

    init(_ activities: [ActivityRule]) {
        activityIDs = activities.map(\.id)
        for (position, rule) in zip(Int32(0)..., activities) {
            for entity in rule.entityIDs {
                if first[entity] == nil { first[entity] = position } else { others[entity, default: []].append(position) }
            }
        }
    }

    /// Calls `body` with the id of each activity that reads `entity`, in rule order.
    func forEachReader(of entity: String, _ body: (String) -> Void) {
        guard let first = first[entity] else { return }
        body(activityIDs[Int(first)])
        for position in others[entity] ?? [] { body(activityIDs[Int(position)]) }
    }
}
