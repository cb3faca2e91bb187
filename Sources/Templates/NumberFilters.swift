import Glibc
import FoundationEssentials
import Platform

/// The filters of numbers: conversions, rounding, arithmetic, statistics, trigonometry, with Home Assistant's semantics.
enum NumberFilters {
    /// `value | filter(args)`, or nil when `filter` is not of this family. `fallback` is the first argument or the
    /// `default` keyword, which several filters return instead of failing.
    static func apply(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      fallback: TemplateValue?, context: EvaluationContext) throws(EvaluationError) -> TemplateValue? {
        switch filter {
        case .float, .int:
            return try Conversions.number(value, integer: filter == .int, fallback: fallback)
        case .round:
            let fallback = args.count > 2 ? args[2] : (keywords.isEmpty ? nil : keywords["default"])
            let precisionValue = args.first ?? (keywords.isEmpty ? nil : keywords["precision"]) ?? .int(0)
            let method = (args.count > 1 ? args[1] : (keywords.isEmpty ? nil : keywords["method"]))?.text ?? "common"
            guard let d = Conversions.float(value) else {
                if let fallback { return fallback }
                throw EvaluationError("round got \(value.typeName) \(value.repr), which is not a number")
            }
            guard let precision = precisionValue.number.flatMap(Int.init(truncating:)) else {
                if let fallback { return fallback }
                throw EvaluationError("round's precision must be a whole number, got \(precisionValue.typeName) \(precisionValue.repr)")
            }
            let rounded = Rounding.round(d, precision: precision, method: method)
            guard precision == 0 else { return .double(rounded) }
            // Home Assistant gives int(result) at precision 0: int(nan) and int(inf) fail, and so does a number beyond
            // 64 bits here.
            if let whole = Int(truncating: rounded) { return .int(whole) }
            if let fallback { return fallback }
            throw EvaluationError("round of \(TemplateValue.pythonFloat(d)) has no whole-number value"
                                  + (d.isFinite ? " within 64 bits" : ""))
        case .abs:
            switch value {
            case .int(let i):
                guard i != .min else { throw EvaluationError.integerOverflow("abs(\(i))") }
                return .int(Swift.abs(i))
            case .double(let d): return .double(Swift.abs(d))
            case .timedelta(let s): return .timedelta(Swift.abs(s))
            default:
                if let d = Conversions.float(value) { return .double(Swift.abs(d)) }
                throw EvaluationError("abs got \(value.typeName) \(value.repr)")
            }
        case .min, .max:
            // Jinja's min/max(case_sensitive=False, attribute=None): text compared without case, items by an
            // attribute (dotted) when one is named; nothing in the sequence is undefined.
            let items = try TemplateRenderer.iterate(value)
            guard var best = items.first else { return .undefined("No aggregated item, sequence was empty.") }
            if keywords.isEmpty, !items.contains(where: \.isText) {
                // Numbers (the usual `[1, x] | min`): compared as they are.
                for item in items.dropFirst() {
                    let order = try Arithmetic.compare(item, best)
                    if (filter == .min && order < 0) || (filter == .max && order > 0) { best = item }
                }
                return best
            }
            let caseSensitive = keywords["case_sensitive"]?.isTruthy ?? false
            let attribute = keywords["attribute"].map(\.text)
            func key(_ item: TemplateValue) throws(EvaluationError) -> TemplateValue {
                var key = item
                if let attribute {
                    guard let found = try Sequences.attribute(item, attribute) else { throw EvaluationError("\(item.typeName) has no attribute \"\(attribute)\"") }
                    key = found
                }
                if !caseSensitive, case .string(let s) = key { return .string(s.lowercased()) }
                return key
            }
            var bestKey = try key(best)
            for item in items.dropFirst() {
                let itemKey = try key(item)
                let order = try Arithmetic.compare(itemKey, bestKey)
                if (filter == .min && order < 0) || (filter == .max && order > 0) { best = item; bestKey = itemKey }
            }
            return best
        case .median, .statisticalMode:
            guard case .list(let items) = value, !items.isEmpty else {
                if let fallback = args.first ?? keywords["default"] { return fallback }
                throw EvaluationError("\(filter.rawValue) needs a non-empty list")
            }
            if filter == .statisticalMode {
                // The first of the most common values, as Python's statistics.mode.
                var best = items[0], bestCount = 0
                for item in items {
                    let count = items.filter { Arithmetic.equal($0, item) }.count
                    if count > bestCount { best = item; bestCount = count }
                }
                return best
            }
            let sorted = try Filters.apply(.sort, value, [], ["case_sensitive": .bool(true)], context: context).listItems ?? items
            let middle = sorted.count / 2
            if sorted.count % 2 == 1 { return sorted[middle] }
            return try Arithmetic.apply(.divide, try Arithmetic.apply(.add, sorted[middle - 1], sorted[middle]), .int(2))
        case .isNumber:
            // float(value) succeeds and is finite: "nan" and "inf" are not numbers, booleans are.
            guard let d = Conversions.float(value) else { return .bool(false) }
            return .bool(d.isFinite)
        case .sqrt, .log, .sin, .cos, .tan:
            // Home Assistant's: the default (keyword, or log's third and the others' second) for anything that is
            // not a number or has no answer (a math domain error).
            let mathFallback = keywords["default"] ?? (filter == .log ? (args.count > 1 ? args[1] : nil) : args.first)
            guard let d = Conversions.float(value) else {
                if let mathFallback { return mathFallback }
                throw EvaluationError("\(filter.rawValue) got \(value.typeName) \(value.repr), which is not a number")
            }
            switch filter {
            case .sqrt:
                guard d >= 0 || d.isNaN else {
                    if let mathFallback { return mathFallback }
                    throw EvaluationError("sqrt of \(TemplateValue.pythonFloat(d)): math domain error")
                }
                return .double(d.squareRoot())
            case .log:
                guard let base = (args.first ?? keywords["base"]).map({ Conversions.float($0) }) ?? M_E else {
                    if let mathFallback { return mathFallback }
                    throw EvaluationError("log's base must be a number, got \((args.first ?? keywords["base"])!.repr)")
                }
                guard d > 0, base > 0, base != 1 else {
                    if let mathFallback { return mathFallback }
                    throw EvaluationError("log of \(TemplateValue.pythonFloat(d)): math domain error")
                }
                return .double(Glibc.log(d) / Glibc.log(base))
            case .sin, .cos, .tan:
                // Python: the sine of an infinity is a math domain error (the default, if given).
                guard !d.isInfinite else {
                    if let mathFallback { return mathFallback }
                    throw EvaluationError("\(filter.rawValue) of \(TemplateValue.pythonFloat(d)): math domain error")
                }
                return .double(filter == .sin ? Glibc.sin(d) : filter == .cos ? Glibc.cos(d) : Glibc.tan(d))
            default: return .double(Glibc.tan(d))
            }
        case .sum:
            guard case .list(let items) = value else { throw EvaluationError("sum needs a list, got \(value.typeName)") }
            var total: TemplateValue = args.first ?? keywords["start"] ?? .int(0)
            for item in items { total = try Arithmetic.apply(.add, total, item) }
            return total
        case .average:
            guard case .list(let items) = value, !items.isEmpty else {
                if let fallback = keywords["default"] ?? args.first { return fallback }
                throw EvaluationError("average needs a non-empty list of numbers")
            }
            var total = 0.0
            for item in items {
                guard let n = item.number, !item.isText else {
                    if let fallback = keywords["default"] ?? args.first { return fallback }
                    throw EvaluationError("average got \(item.typeName) \(item.repr), which is not a number")
                }
                total += n
            }
            return .double(total / Double(items.count))
        case .multiply, .add:
            // Home Assistant's: float(value) times / plus the amount.
            guard let amount = args.first ?? keywords["amount"] else { throw EvaluationError("\(filter.rawValue) needs an amount") }
            let fallback = args.count > 1 ? args[1] : keywords["default"]
            guard let d = Conversions.float(value), !amount.isText else {
                if let fallback { return fallback }
                throw EvaluationError("\(filter.rawValue) got \(value.typeName) \(value.repr), which is not a number")
            }
            return try Arithmetic.apply(filter == .multiply ? .multiply : .add, .double(d), amount)
        case .ordinal:
            // Home Assistant's: 1st, 2nd, 3rd, 11th…, from the text's last digits.
            let text = value.text
            guard let last = text.last?.wholeNumberValue, let lastTwo = Int(String(text.suffix(2))) else {
                throw EvaluationError("ordinal needs a whole number, got \(value.typeName) \(value.repr)")
            }
            let suffixes = ["th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"]
            return .string(text + ((11...13).contains(lastTwo % 100) ? "th" : suffixes[last]))
        case .asin, .acos, .atan, .atan2:
            return try Self.trigonometry(filter, value, args, keywords)
        case .filesizeformat:
            guard let bytes = Conversions.float(value) else {
                throw EvaluationError("filesizeformat needs a number, got \(value.typeName) \(value.repr)")
            }
            // Python's int() of a negative infinity overflows.
            guard bytes != -.infinity else { throw EvaluationError("filesizeformat cannot convert float infinity to integer") }
            return .string(Self.fileSize(bytes, binary: (args.first ?? keywords["binary"])?.isTruthy ?? false))
        default: return nil
        }
    }

    /// Jinja's filesizeformat: `1 Byte`, `999 Bytes`, then one decimal of kB, MB… (of KiB, MiB… when binary).
    static func fileSize(_ bytes: Double, binary: Bool) -> String {
        let base: Double = binary ? 1024 : 1000
        if bytes == 1 { return "1 Byte" }
        if bytes < base {
            // Python's int(): toward zero, every digit of the whole number.
            let whole = PythonFormat.floatBody(bytes.rounded(.towardZero) + 0, "f", precision: 0, alternate: false)
            return (whole.negative ? "-" : "") + whole.body + " Bytes"
        }
        let prefixes = binary ? ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"] : ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
        var unit = base
        for (i, prefix) in prefixes.enumerated() {
            unit *= base
            // Python compares with the exact whole number base**(i + 2): 1000**8 (10**24) is just above the double
            // nearest it, which 1e24 is; 10**27 just below its double. The others are exact doubles.
            let below = bytes < unit || (!binary && i == 6 && bytes == unit)
            if below || prefix == prefixes.last {
                let scaled = PythonFormat.floatBody(base * bytes / unit, "f", precision: 1, alternate: false)
                return (scaled.negative ? "-" : "") + scaled.body + " " + prefix
            }
        }
        return ""
    }
}

extension NumberFilters {
    /// `asin`, `acos`, `atan`, `atan2` as Home Assistant's: the default for what is not a number or outside the domain.
    static func trigonometry(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue],
                             _ keywords: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        let fallback = keywords["default"] ?? (filter == .atan2 ? (args.count > 1 ? args[1] : nil) : args.first)
        func fail() throws(EvaluationError) -> TemplateValue {
            if let fallback { return fallback }
            throw EvaluationError("\(filter.rawValue) got \(value.typeName) \(value.repr): not a number or outside its domain")
        }
        guard let d = Conversions.float(value) else { return try fail() }
        switch filter {
        case .asin: guard (-1...1).contains(d) else { return try fail() }; return .double(Glibc.asin(d))
        case .acos: guard (-1...1).contains(d) else { return try fail() }; return .double(Glibc.acos(d))
        case .atan: return .double(Glibc.atan(d))
        default:
            guard let x = args.first.flatMap(Conversions.float) else { return try fail() }
            return .double(Glibc.atan2(d, x))
        }
    }
}
