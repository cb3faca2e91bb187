import Glibc
import FoundationEssentials
import Platform

/// The filters of any value: defaults, JSON, conditionals, types, and the filters that are functions of the same name, with Home Assistant's semantics.
enum ValueFilters {
    /// `value | filter(args)`, or nil when `filter` is not of this family. `fallback` is the first argument or the
    /// `default` keyword, which several filters return instead of failing.
    static func apply(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      fallback: TemplateValue?, context: EvaluationContext) throws(EvaluationError) -> TemplateValue? {
        switch filter {
        case .default, .d:
            // Jinja's default replaces an undefined value (a failed lookup, caught by the evaluator), not None; with
            // boolean=true, anything falsy.
            let boolean = (args.count > 1 ? args[1] : keywords["boolean"])?.isTruthy ?? false
            if case .undefined = value { return fallback ?? .string("") }
            if boolean && !value.isTruthy { return fallback ?? .string("") }
            return value
        case .fromJSON:
            // from_json(default): the default when the text is not JSON (Home Assistant 2025.5 and later).
            let fallback = args.first ?? keywords["default"]
            guard args.count <= 1, keywords.keys.allSatisfy({ $0 == "default" }) else { throw EvaluationError("from_json takes one argument, default") }
            guard let parsed = try? TemplateJSON.parse(value.text) else {
                if let fallback { return fallback }
                throw EvaluationError("from_json got \(value.typeName) \(value.repr), which is not JSON")
            }
            return parsed
        case .bitwiseAnd, .bitwiseOr, .bitwiseXor:
            return try Functions.call(Function(rawValue: filter.rawValue)!, [value] + args, keywords, context: context)
        case .combine:
            return try Functions.call(.combine, [value] + args, keywords, context: context)
        case .closest:
            return try Locations.closestFilter(value, args, context: context)
        case .shuffle:
            return try Functions.call(.shuffle, [value] + args, keywords, context: context)
        case .union, .intersect, .difference, .symmetricDifference, .md5, .sha1, .sha256, .sha512, .clamp, .wrap, .remap:
            return try Functions.call(Function(rawValue: filter.rawValue)!, [value] + args, keywords, context: context)
        case .tojson:
            // Jinja's tojson(indent=None): json.dumps with keys sorted and ASCII only, then <, >, & and ' escaped for HTML.
            let indent = args.first ?? keywords["indent"]
            guard indent == nil || indent == TemplateValue.none || indent == .int(2) else {
                throw EvaluationError("tojson's indent may only be None or 2 here")
            }
            let style = TemplateJSON.Style(spaced: true, indented: indent == .int(2), sortKeys: true, asciiOnly: true)
            return .string(TemplateJSON.text(value, style).replacingAll("<", with: "\\u003c").replacingAll(">", with: "\\u003e")
                .replacingAll("&", with: "\\u0026").replacingAll("'", with: "\\u0027"))
        case .toJSON:
            // Home Assistant's to_json(ensure_ascii=False, pretty_print=False, sort_keys=False): orjson's compact text,
            // or json.dumps' when ASCII only is asked.
            let unknown = Set(keywords.keys).subtracting(["ensure_ascii", "pretty_print", "sort_keys"])
            guard args.count <= 3, unknown.isEmpty else { throw EvaluationError("to_json takes ensure_ascii, pretty_print and sort_keys") }
            func option(_ position: Int, _ name: String) -> Bool { (args.count > position ? args[position] : keywords[name])?.isTruthy ?? false }
            let ascii = option(0, "ensure_ascii")
            let style = TemplateJSON.Style(spaced: ascii, indented: option(1, "pretty_print"), sortKeys: option(2, "sort_keys"), asciiOnly: ascii)
            return .string(TemplateJSON.text(value, style))
        case .iif:
            // Home Assistant's iif(value, if_true=True, if_false=False, if_none): Python truthiness.
            let ifNone = args.count > 2 ? args[2] : keywords["if_none"]
            if value == .none, let ifNone { return ifNone }
            return value.isTruthy ? (args.first ?? keywords["if_true"] ?? .bool(true)) : (args.count > 1 ? args[1] : keywords["if_false"] ?? .bool(false))
        case .isDefined:
            // Fails only for an undefined value, which the evaluator reports before it gets here.
            return value
        case .typeof:
            return .string(value.pythonTypeName)
        case .bool:
            switch value {
            case .bool: return value
            case .string(let s):
                switch s.lowercased() {
                case "true", "on", "yes", "1", "enable": return .bool(true)
                case "false", "off", "no", "0", "disable", "none": return .bool(false)
                default:
                    if let fallback { return fallback }
                    throw EvaluationError("bool got string \(value.repr)")
                }
            default: return .bool(value.isTruthy)
            }
        default: return nil
        }
    }
}
