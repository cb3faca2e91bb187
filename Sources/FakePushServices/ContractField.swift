import JSON

/// One field of a service's published request schema (its OpenAPI document), as the generated contracts list them,
/// and the check a fake makes with it: type, lengths, bounds, item counts, choices.
struct ContractField: Sendable {
    let types: [String]
    let minLength: Int?
    let maxLength: Int?
    let minimum: Double?
    let exclusiveMinimum: Double?
    let maximum: Double?
    let minItems: Int?
    let maxItems: Int?
    let choices: [String]?

    /// What the schema refuses in an object's fields: a required one missing, one of the wrong type or past its
    /// limits, and (`strict`: additionalProperties false) one the document does not name. Nulls are skipped (a
    /// merge patch's "clear").
    static func problem(_ fields: [String: JSONValue], _ schema: [String: ContractField], required: [String], strict: Bool,
                        at place: String) -> String? {
        for name in required where fields[name] == nil { return "\(place).\(name): required" }
        for name in fields.keys.sorted() {
            let value = fields[name]!
            guard let field = schema[name] else {
                if strict { return "\(place).\(name): unexpected property" }
                continue
            }
            if value == .null { continue }
            if let problem = field.problem(value) { return "\(place).\(name): \(problem)" }
        }
        return nil
    }

    /// What this field's schema refuses in `value`, or nil.
    func problem(_ value: JSONValue) -> String? {
        let typed = types.contains { type in
            switch (type, value) {
            case ("string", .string), ("boolean", .bool), ("array", .array), ("object", .object), ("number", .int), ("number", .double), ("integer", .int):
                return true
            case ("integer", .double(let d)): return d.rounded() == d
            default: return false
            }
        }
        guard typed else { return "expected \(types.joined(separator: " or "))" }
        if let text = value.stringValue {
            // JSON Schema's lengths count code points.
            if let max = maxLength, text.unicodeScalars.count > max { return "expected length <= \(max)" }
            if let min = minLength, text.unicodeScalars.count < min { return "expected length >= \(min)" }
            if let choices, !choices.contains(text) { return "expected one of \(choices.joined(separator: ", "))" }
        }
        if case .string = value {} else if let number = value.doubleValue {
            if let min = minimum, number < min { return "expected number >= \(min)" }
            if let min = exclusiveMinimum, number <= min { return "expected number > \(min)" }
            if let max = maximum, number > max { return "expected number <= \(max)" }
        }
        if let items = value.arrayValue {
            if let min = minItems, items.count < min { return "expected at least \(min) items" }
            if let max = maxItems, items.count > max { return "expected at most \(max) items" }
        }
        return nil
    }
}
