/// Home Assistant's set functions (`union`, `intersect`, `difference`, `symmetric_difference`, each a function and a
/// filter) and `set()`: Python's sets, returned as lists. Equal values (1, 1.0, True) are one, as in a set.
///
/// Order: Python lists a set in its hash table's order. For small non-negative integers that is ascending, which is
/// what these give for numbers; text hashes differently in every Home Assistant process (hash randomisation), so
/// no order is Home Assistant's there and these keep the order first seen. A template that shows the result sorts it.
enum SetOperations {
    enum Operation: String { case union, intersect, difference, symmetricDifference = "symmetric_difference" }

    static func apply(_ operation: Operation, _ value: TemplateValue, _ other: TemplateValue) throws(EvaluationError) -> TemplateValue {
        let a = try members(value, operation.rawValue), b = try members(other, operation.rawValue)
        let inA = Set(a.map(\.identityKey)), inB = Set(b.map(\.identityKey))
        let result: [TemplateValue]
        switch operation {
        case .union: result = a + b.filter { !inA.contains($0.identityKey) }
        case .intersect: result = a.filter { inB.contains($0.identityKey) }
        case .difference: result = a.filter { !inB.contains($0.identityKey) }
        case .symmetricDifference: result = a.filter { !inB.contains($0.identityKey) } + b.filter { !inA.contains($0.identityKey) }
        }
        return .list(ordered(result))
    }

    /// `set(iterable)`: its distinct members.
    static func set(_ value: TemplateValue) throws(EvaluationError) -> TemplateValue {
        .list(ordered(try distinct(TemplateRenderer.iterate(value))))
    }

    /// The distinct members of a list (not text: Python refuses a string here).
    private static func members(_ value: TemplateValue, _ name: String) throws(EvaluationError) -> [TemplateValue] {
        guard case .list(let items) = value else { throw EvaluationError("\(name) expected a list, got \(value.pythonTypeName)") }
        try RenderBudget.spend(items.count, name)
        for item in items {
            if case .list = item { throw EvaluationError("unhashable type: 'list'") }
            if case .mapping = item { throw EvaluationError("unhashable type: 'dict'") }
        }
        return distinct(items)
    }

    private static func distinct(_ items: [TemplateValue]) -> [TemplateValue] {
        var seen: Swift.Set<String> = []
        return items.filter { seen.insert($0.identityKey).inserted }
    }

    /// Numbers ascending (a set of small integers lists them so); anything else as first seen.
    private static func ordered(_ items: [TemplateValue]) -> [TemplateValue] {
        guard !items.isEmpty, items.allSatisfy({ $0.number != nil && !$0.isText }) else { return items }
        return items.sorted { $0.number! < $1.number! }
    }
}
