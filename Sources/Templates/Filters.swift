import Glibc
import FoundationEssentials

/// The filters of the template language (`value | filter(args)`), with Home Assistant's semantics: what every filter
/// shares (the render's budget, undefined values), then the filter's family (numbers, text, time, sequences, values).
enum Filters {
    static func apply(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        let fallback = args.first ?? (keywords.isEmpty ? nil : keywords["default"])
        // What a filter walks or copies is charged to the render: a filter over a huge list or text is bounded.
        switch value {
        case .list(let items): try RenderBudget.spend(items.count, "the \(filter.rawValue) filter")
        case .string(let text): try RenderBudget.spendBuilding(text.utf8.count, "the \(filter.rawValue) filter")
        default: break
        }
        switch filter {
        case .string, .toJSON, .tojson:
            try EvaluationLimits.checkPrintable(value, "the \(filter.rawValue) filter")
        default: break
        }
        // Undefined takes the filters that read it as text or as a sequence (nothing); a number or a time made of it
        // fails, as Home Assistant's filters do.
        if case .undefined(let why) = value, Self.failOnUndefined.contains(filter) { throw EvaluationError(why) }
        if let result = try NumberFilters.apply(filter, value, args, keywords, fallback: fallback, context: context) { return result }
        if let result = try TextFilters.apply(filter, value, args, keywords, fallback: fallback, context: context) { return result }
        if let result = try TimeFilters.apply(filter, value, args, keywords, fallback: fallback, context: context) { return result }
        if let result = try SequenceFilters.apply(filter, value, args, keywords, fallback: fallback, context: context) { return result }
        if let result = try ValueFilters.apply(filter, value, args, keywords, fallback: fallback, context: context) { return result }
        throw EvaluationError("the filter \(filter.rawValue) is not implemented")  // FilterFamilyTests keeps every filter in one family
    }
}

extension Filters {
    /// Filters that fail on an undefined value: they make a number or a time of it.
    static let failOnUndefined: Set<Filter> = [
        .float, .int, .round, .abs, .sqrt, .log, .sin, .cos, .tan, .asin, .acos, .atan, .atan2, .timestampCustom, .timestampLocal,
        .timestampUTC, .asTimestamp, .asDatetime, .asLocal, .asTimedelta, .multiply, .add, .bitwiseAnd, .bitwiseOr, .bitwiseXor, .ordinal,
        .isNumber, .relativeTime, .timeSince, .timeUntil, .todayAt, .base64Decode, .ord,
    ]
}
