import FoundationEssentials
import Platform
import HomeAssistant

/// Methods on values (`delta.total_seconds()`, `when.isoformat()`, `text.lower()`).
enum Methods {
    static func call(_ method: Method, on value: TemplateValue, _ args: [TemplateValue],
                     context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        switch (method, value) {
        case (.totalSeconds, .timedelta(let s)): return .double(s)
        case (.timestamp, .datetime(let t, let offset)): return .double(TemplateValue.instant(t, offset, zone: context.timeZone))
        case (.isoformat, .datetime(let t, let offset)): return .string(TemplateValue.isoformat(t, offset))
        case (.strftime, .datetime(let t, let offset)):
            // In the datetime's own zone, as Python's strftime (%z empty for a naive one).
            return .string(StrftimeFormat.format(args.first?.text ?? "%Y-%m-%d %H:%M:%S", epoch: TemplateValue.wallTime(t, offset),
                                                 utcOffset: offset == TemplateValue.naive ? nil : offset))
        case (.weekday, .datetime(let t, let offset)): return .int(Timestamp.components(TemplateValue.wallTime(t, offset)).weekday)
        case (.isoweekday, .datetime(let t, let offset)): return .int(Timestamp.components(TemplateValue.wallTime(t, offset)).weekday + 1)
        case (.lower, .string(let s)): return .string(s.lowercased())
        case (.upper, .string(let s)): return .string(s.uppercased())
        case (.strip, .string(let s)): return .string(s.trimmingWhitespace())
        case (.split, .string(let s)):
            let parts: [String] = if let separator = args.first?.text {
                s.components(separatedBy: separator)
            } else {
                s.split(whereSeparator: \.isWhitespace).map(String.init)
            }
            return .list(parts.map(TemplateValue.string))
        case (.startswith, .string(let s)): return .bool(s.hasPrefix(args.first?.text ?? ""))
        case (.endswith, .string(let s)): return .bool(s.hasSuffix(args.first?.text ?? ""))
        case (.replace, .string(let s)):
            guard args.count >= 2 else { throw EvaluationError("replace() needs two arguments") }
            return .string(try EvaluationLimits.replacing(args[0].text, with: args[1].text, in: s))
        case (.format, .string(let s)): return .string(try PythonFormat.format(s, args, [:]))
        case (.items, .mapping(let m)): return .list(m.keys.sorted().map { .list([.string($0), m[$0]!]) })
        case (.keys, .mapping(let m)): return .list(m.keys.sorted().map(TemplateValue.string))
        case (.values, .mapping(let m)): return .list(m.keys.sorted().map { m[$0]! })
        default:
            throw EvaluationError("\(value.typeName) \(value.repr) has no method \(method.rawValue)()")
        }
    }
}
