import Glibc
import FoundationEssentials

/// Jinja's map, select, reject, selectattr and rejectattr.
enum Sequences {
    static func apply(_ filter: Filter, _ items: [TemplateValue], _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      context: EvaluationContext) throws(EvaluationError) -> [TemplateValue] {
        switch filter {
        case .map:
            if let attribute = keywords["attribute"]?.text {
                // An item without it gives the default, else undefined (joined as nothing), as Jinja's.
                return try items.map { item throws(EvaluationError) in
                    try Self.attribute(item, attribute) ?? keywords["default"] ?? .undefined("\(item.typeName) has no attribute \"\(attribute)\"")
                }
            }
            guard let name = args.first?.text else {
                throw EvaluationError("map needs a filter name or attribute=…, got nothing")
            }
            // Home Assistant's entity functions are filters too: ['sensor.a'] | map('states').
            if let function = Function(rawValue: name), function.readsEntity {
                return try items.map { item throws(EvaluationError) in try Functions.call(function, [item] + args.dropFirst(), keywords, context: context) }
            }
            guard let mapped = Filter(rawValue: name == "tojson" ? "to_json" : name) else {
                throw EvaluationError("map needs a filter name or attribute=…, got \(args.first?.repr ?? "nothing")")
            }
            return try items.map { item throws(EvaluationError) in try Filters.apply(mapped, item, Array(args.dropFirst()), keywords, context: context) }
        case .select, .reject:
            var kept: [TemplateValue] = []
            for item in items where try test(args.first?.text, item, args.count > 1 ? args[1] : nil, Array(args.dropFirst(2)), context: context) == (filter == .select) {
                kept.append(item)
            }
            return kept
        default:
            guard let attribute = args.first?.text else { throw EvaluationError("\(filter.rawValue) needs an attribute name") }
            var kept: [TemplateValue] = []
            for item in items {
                let found = try Self.attribute(item, attribute)
                // A missing attribute is Jinja's undefined: not `defined`, equal to nothing, and an error to compare.
                let name = args.count > 1 ? args[1].text : nil
                if found == nil, name == "defined" || name == "undefined" {
                    if (name == "undefined") == (filter == .selectattr) { kept.append(item) }
                    continue
                }
                let field = found ?? .undefined("\(item.typeName) has no attribute \"\(attribute)\"")
                if try test(args.count > 1 ? args[1].text : nil, field, args.count > 2 ? args[2] : nil, Array(args.dropFirst(3)), context: context) == (filter == .selectattr) {
                    kept.append(item)
                }
            }
            return kept
        }
    }

    /// Python's `sorted(items, key=…, reverse=…)`: stable, and an error (not a crash, not a silent order) when two keys
    /// cannot be compared; the keys are checked first, so the sort itself cannot fail.
    static func stableSorted<T>(_ items: [T], by key: (T) -> TemplateValue, reverse: Bool = false) throws(EvaluationError) -> [T] {
        let keys = items.map(key)
        for (a, b) in zip(keys, keys.dropFirst()) { _ = try Arithmetic.compare(a, b) }
        let order = keys.indices.sorted { i, j in
            let c = (try? Arithmetic.compare(keys[i], keys[j])) ?? 0
            return c == 0 ? i < j : (c < 0) != reverse
        }
        return order.map { items[$0] }
    }

    /// `item.name`, dotted names followed; nil when missing.
    static func attribute(_ item: TemplateValue, _ path: String) throws(EvaluationError) -> TemplateValue? {
        var value = item
        for name in path.split(separator: ".") {
            if let field = try? TemplateEvaluator.timeField(value, String(name)) { value = field; continue }
            guard case .mapping(let members) = value, let next = members[String(name)] else { return nil }
            value = next
        }
        return value
    }

    /// The tests that take a value, usable after `is` too.
    static let testsTakingAValue: Set<String> = ["eq", "equalto", "ne", "lt", "le", "gt", "ge", "greaterthan", "lessthan", "in", "divisibleby",
                                                 "match", "search", "contains", "sameas"]
    /// Jinja's and Home Assistant's tests of the value alone, beyond `TestKind`'s.
    static let testsOfTheValue: Set<String> = ["datetime", "list", "is_number", "boolean", "integer", "float", "mapping", "sequence",
                                               "iterable", "lower", "upper", "string_like", "true", "false"]
    /// Home Assistant's tests of an entity, its id the value: `'light.x' is is_state('on')`.
    static let entityTests: Set<String> = ["is_state", "is_state_attr", "has_value"]

    /// A Jinja test by name; no name tests truthiness.
    static func test(_ name: String?, _ value: TemplateValue, _ argument: TemplateValue?, _ more: [TemplateValue] = [],
                     context: EvaluationContext? = nil) throws(EvaluationError) -> Bool {
        guard let name else { return value.isTruthy }
        // Home Assistant's entity tests, usable in select/reject: the item is the entity id.
        if let context, let function = Function(rawValue: name), function.readsEntity, function != .states, function != .stateAttr {
            return try Functions.call(function, [value] + (argument.map { [$0] } ?? []) + more, [:], context: context).isTruthy
        }
        func other() throws(EvaluationError) -> TemplateValue {
            guard let argument else { throw EvaluationError("the test \(name) needs a value to compare with") }
            return argument
        }
        switch name {
        case "defined": return true
        case "undefined": return false
        case "none": return value == .none
        case "true": return value == .bool(true)
        case "false": return value == .bool(false)
        case "number": if case .bool = value { return false } else { return value.number != nil }
        case "string": return value.isText
        case "even", "odd":
            guard let i = value.integer else { throw EvaluationError("\(name) needs an integer, got \(value.typeName)") }
            return (i % 2 == 0) == (name == "even")
        case "eq", "==", "equalto": return Arithmetic.equal(value, try other())
        case "ne", "!=": return !Arithmetic.equal(value, try other())
        case "lt", "<", "lessthan": return try Arithmetic.compare(value, try other()) < 0
        case "le", "<=": return try Arithmetic.compare(value, try other()) <= 0
        case "gt", ">", "greaterthan": return try Arithmetic.compare(value, try other()) > 0
        case "ge", ">=": return try Arithmetic.compare(value, try other()) >= 0
        case "in": return try Arithmetic.apply(.contains, value, try other()).isTruthy
        case "contains": return try Arithmetic.apply(.contains, try other(), value).isTruthy
        case "sameas": return value == (try other())
        case "match": return try RegularExpressions.match(value, try other(), ignoreCase: false)
        case "search": return try RegularExpressions.search(value, try other(), ignoreCase: false)
        case "datetime": if case .datetime = value { return true } else { return false }
        case "list": if case .list = value { return true } else { return false }
        case "mapping": if case .mapping = value { return true } else { return false }
        case "sequence", "iterable":
            switch value { case .list, .string, .mapping: return true; default: return false }
        case "string_like": return value.isText
        case "boolean": if case .bool = value { return true } else { return false }
        case "integer": if case .int = value { return true } else { return false }
        case "float": if case .double = value { return true } else { return false }
        case "lower": return value.isText && value.text == value.text.lowercased()
        case "upper": return value.isText && value.text == value.text.uppercased()
        case "is_number": return Conversions.float(value)?.isFinite ?? false
        case "divisibleby":
            let divisor = try other()
            guard let a = value.integer, let b = divisor.integer else {
                throw EvaluationError("divisibleby needs integers, got \(value.typeName) and \(divisor.typeName)")
            }
            guard b != 0 else { throw EvaluationError("division by zero") }
            return Arithmetic.floorModulo(a, b) == 0
        default: throw EvaluationError("unknown test \"\(name)\" in select/reject")
        }
    }
}
