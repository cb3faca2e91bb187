import JSON

/// One field of a service's published request schema (its OpenAPI document), as the generated contracts list them,
/// and the check a fake makes with it: type, lengths, bounds, item counts, choices, pattern, and nested objects and
/// array items checked the same way, to any depth.
final class ContractField: Sendable {
    let types: [String]
    let minLength: Int?
    let maxLength: Int?
    let minimum: Double?
    let exclusiveMinimum: Double?
    let maximum: Double?
    let minItems: Int?
    let maxItems: Int?
    let choices: [String]?
    /// An ECMA-262 pattern the text must match somewhere (JSON Schema's `pattern`: anchors are the pattern's own).
    let pattern: String?
    /// An object's properties, those it needs, and whether it refuses others (additionalProperties false).
    let properties: [String: ContractField]?
    let required: [String]
    let strict: Bool
    /// An array's item schema.
    let items: ContractField?

    init(types: [String], minLength: Int?, maxLength: Int?, minimum: Double?, exclusiveMinimum: Double?, maximum: Double?,
         minItems: Int?, maxItems: Int?, choices: [String]?, pattern: String? = nil, properties: [String: ContractField]? = nil,
         required: [String] = [], strict: Bool = false, items: ContractField? = nil) {
        self.types = types
        self.minLength = minLength
        self.maxLength = maxLength
        self.minimum = minimum
        self.exclusiveMinimum = exclusiveMinimum
        self.maximum = maximum
        self.minItems = minItems
        self.maxItems = maxItems
        self.choices = choices
        self.pattern = pattern
        self.properties = properties
        self.required = required
        self.strict = strict
        self.items = items
    }

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

    /// JSON Schema's `pattern`: a match anywhere in the text (Swift's Regex reads the ECMA syntax these use). A pattern
    /// Swift cannot read is taken as matching: the fake then checks less, never refuses what the service takes.
    static func matches(_ text: String, _ pattern: String) -> Bool {
        guard let regex = try? Regex(pattern) else { return true }
        return (try? regex.firstMatch(in: text)) != nil
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
        if let text = value.stringValue, let pattern, !Self.matches(text, pattern) { return "expected to match \(pattern)" }
        if let list = value.arrayValue {
            if let min = minItems, list.count < min { return "expected at least \(min) items" }
            if let max = maxItems, list.count > max { return "expected at most \(max) items" }
            if let items {
                for (index, item) in list.enumerated() where item != .null {
                    if let problem = items.problem(item) { return "[\(index)]: \(problem)" }
                }
            }
        }
        if case .object(let members) = value, let properties,
           let problem = Self.problem(members, properties, required: required, strict: strict, at: "") {
            return String(problem.dropFirst())
        }
        return nil
    }
}
