import FoundationEssentials
import Platform

/// Methods on values (`delta.total_seconds()`, `when.isoformat()`, `text.lower()`).
enum Methods {
    static func call(_ method: Method, on value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue] = [:],
                     context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        if let result = try CalendarValues.call(method, on: value, args, keywords) { return result }
        switch (method, value) {
        case (.date, .datetime(let t, let offset)): return CalendarValues.date(of: t, offset)
        // datetime.today() (called on one, as `now().today()`): the local time now, without a zone; date.today() its day.
        case (.today, .datetime):
            return .datetime(context.now + Double(context.timeZone.secondsFromGMT(at: context.now)), offset: TemplateValue.naive)
        case (.today, .date):
            return CalendarValues.date(of: context.now + Double(context.timeZone.secondsFromGMT(at: context.now)), TemplateValue.naive)
        // astimezone() without a zone: the same instant in the local zone (a naive one read as local first).
        case (.astimezone, .datetime(let t, let offset)):
            guard args.isEmpty, keywords.isEmpty else { throw EvaluationError("astimezone() takes no zone here: it converts to the local zone") }
            let instant = TemplateValue.instant(t, offset, zone: context.timeZone)
            return .datetime(instant, offset: context.timeZone.secondsFromGMT(at: instant))
        case (.time, .datetime(let t, let offset)): return CalendarValues.time(of: t, offset)
        case (.replace, .datetime(let t, let offset)):
            // datetime.replace(year=…, …, microsecond=…): the wall time's fields changed, the zone kept.
            let c = Timestamp.components(TemplateValue.wallTime(t, offset))
            func field(_ name: String, _ current: Int, _ range: ClosedRange<Int>) throws(EvaluationError) -> Int {
                guard let given = keywords[name] else { return current }
                guard let n = given.integer, range.contains(n) else { throw EvaluationError("\(name) must be in \(range.lowerBound)..\(range.upperBound), got \(given.repr)") }
                return n
            }
            guard args.isEmpty else { throw EvaluationError("datetime.replace() takes keyword arguments: year, month, day, hour, minute, second, microsecond") }
            let year = try field("year", c.year, 1...9999), month = try field("month", c.month, 1...12)
            let day = try field("day", c.day, 1...31), hour = try field("hour", c.hour, 0...23)
            let minute = try field("minute", c.minute, 0...59), second = try field("second", c.second, 0...59)
            let micro = try field("microsecond", c.microsecond, 0...999_999)
            guard day <= Timestamp.daysIn(month: month, year: year) else { throw EvaluationError("day is out of range for month") }
            let wall = Double(Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))) * 86_400
                + Double(hour * 3600 + minute * 60 + second) + Double(micro) / 1_000_000
            return .datetime(offset == TemplateValue.naive ? wall : wall - Double(offset), offset: offset)
        case (.totalSeconds, .timedelta(let s)): return .double(s)
        case (.timestamp, .datetime(let t, let offset)): return .double(TemplateValue.instant(t, offset, zone: context.timeZone))
        case (.isoformat, .datetime(let t, let offset)): return .string(TemplateValue.isoformat(t, offset))
        case (.strftime, .datetime(let t, let offset)):
            // In the datetime's own zone, as Python's strftime (%z empty for a naive one).
            let utcOffset = offset == TemplateValue.naive ? nil : offset
            return .string(StrftimeFormat.format(args.first?.text ?? "%Y-%m-%d %H:%M:%S", epoch: TemplateValue.wallTime(t, offset),
                                                 utcOffset: utcOffset, zoneName: context.timeZone.zoneName(at: t, utcOffset: utcOffset)))
        case (.weekday, .datetime(let t, let offset)): return .int(Timestamp.components(TemplateValue.wallTime(t, offset)).weekday)
        case (.isoweekday, .datetime(let t, let offset)): return .int(Timestamp.components(TemplateValue.wallTime(t, offset)).weekday + 1)
        case (.lower, .string(let s)): return .string(PythonText.lower(s))
        case (.upper, .string(let s)): return .string(s.uppercased())
        case (.strip, .string(let s)), (.lstrip, .string(let s)), (.rstrip, .string(let s)):
            return .string(PythonText.strip(s, args.first.flatMap { $0 == .none ? nil : $0.text }, leading: method != .rstrip, trailing: method != .lstrip))
        case (.split, .string(let s)), (.rsplit, .string(let s)):
            // str.split(sep=None, maxsplit=-1), rsplit from the right.
            let (separator, limit) = try Self.splitArguments(method.rawValue, args, keywords)
            if let separator {
                guard !separator.isEmpty else { throw EvaluationError("\(method.rawValue): empty separator") }
                try EvaluationLimits.chargeSearch(separator, in: s, method.rawValue)
            }
            let parts: [String] = if method == .rsplit {
                PythonText.rsplit(s, separator: separator, limit: limit)
            } else if let separator {
                PythonText.split(s, separator: separator, limit: limit)
            } else {
                PythonText.splitAtWhitespace(s, limit: limit)
            }
            return .list(parts.map(TemplateValue.string))
        case (.startswith, .string(let s)): return .bool(PythonText.hasPrefix(s, args.first?.text ?? ""))
        case (.endswith, .string(let s)): return .bool(PythonText.hasSuffix(s, args.first?.text ?? ""))
        case (.replace, .string(let s)):
            guard args.count >= 2 else { throw EvaluationError("replace() needs two arguments") }
            return .string(try EvaluationLimits.replacing(args[0].text, with: args[1].text, in: s))
        case (.format, .string(let s)): return .string(try PythonFormat.format(s, args, keywords))
        case (.join, .string(let separator)):
            let items = try TemplateRenderer.iterate(args.first ?? .list([]))
            guard items.allSatisfy(\.isText) else { throw EvaluationError("join() needs text items") }
            return .string(try EvaluationLimits.joining(items.map(\.text), separator: separator, "join()"))
        case (.get, .mapping(let m)):
            guard case .string(let key)? = args.first else { return args.count > 1 ? args[1] : .none }
            return m[key] ?? (args.count > 1 ? args[1] : .none)
        case (.count, .string(let s)):
            try EvaluationLimits.chargeSearch(args.first?.text ?? "", in: s, "count")
            let needle = args.first?.text ?? ""
            return .int(needle.isEmpty ? PythonText.length(s) + 1 : PythonText.occurrences(of: needle, in: s).count)
        case (.index, .string(let s)), (.find, .string(let s)), (.rindex, .string(let s)), (.rfind, .string(let s)):
            // str.find(sub, start, end) and kin: the first (last) code point where the text starts within [start:end];
            // index and rindex raise, find and rfind give -1.
            guard case .string(let needle)? = args.first, args.count <= 3 else { throw EvaluationError("\(method.rawValue)() needs text to look for, then start and end") }
            func bound(_ position: Int) throws(EvaluationError) -> Int? {
                guard args.count > position, args[position] != .none else { return nil }
                guard case .int(let n) = args[position] else { throw EvaluationError("\(method.rawValue)(): slice indices must be integers or None") }
                return n
            }
            try EvaluationLimits.chargeSearch(needle, in: s, method.rawValue)
            let fromRight = method == .rfind || method == .rindex
            if let bounds = PythonText.searchBounds(s, start: try bound(1), end: try bound(2), needle: needle) {
                let within = String(s.unicodeScalars[bounds.lower..<bounds.upper])
                let at = fromRight ? PythonText.lastOffset(of: needle, in: within) : PythonText.firstOffset(of: needle, in: within)
                if let at { return .int(bounds.offset + at) }
            }
            if method == .find || method == .rfind { return .int(-1) }
            throw EvaluationError("substring not found")
        case (.count, .list(let items)): return .int(items.filter { Arithmetic.equal($0, args.first ?? .none) }.count)
        case (.index, .list(let items)):
            guard let i = items.firstIndex(where: { Arithmetic.equal($0, args.first ?? .none) }) else {
                throw EvaluationError("\((args.first ?? .none).repr) is not in list")
            }
            return .int(i)
        case (.title, .string(let s)): return .string(s.titleCased)
        case (.capitalize, .string(let s)): return .string(s.prefix(1).uppercased() + s.dropFirst().lowercased())

        case (.isdigit, .string(let s)), (.isalpha, .string(let s)), (.isnumeric, .string(let s)), (.isdecimal, .string(let s)),
             (.isalnum, .string(let s)), (.isspace, .string(let s)), (.islower, .string(let s)), (.isupper, .string(let s)):
            return .bool(PythonText.test(method.rawValue, s))
        case (.swapcase, .string(let s)):
            try RenderBudget.spendBuilding(s.utf8.count * 3, "swapcase()")
            return .string(PythonText.swapcase(s))
        case (.ljust, .string(let s)), (.rjust, .string(let s)), (.center, .string(let s)):
            // str.ljust/rjust/center(width, fillchar=' '): padded with one code point to `width` code points.
            guard case .int(let width)? = args.first, args.count <= 2 else { throw EvaluationError("\(method.rawValue)() needs a whole number width, then a fill character") }
            var fill = " "
            if args.count > 1 {
                guard case .string(let given) = args[1] else { throw EvaluationError("The fill character must be a unicode character, not \(args[1].pythonTypeName)") }
                fill = given
            }
            guard fill.unicodeScalars.count == 1 else { throw EvaluationError("The fill character must be exactly one character long") }
            let length = PythonText.length(s)
            guard width > length else { return .string(s) }
            try EvaluationLimits.checkLength(width, "\(method.rawValue)(\(width))")
            try RenderBudget.spendBuilding(width * fill.utf8.count, "\(method.rawValue)()")
            let margin = width - length
            let left = switch method {
            case .ljust: 0
            case .rjust: margin
            default: margin / 2 + (margin & width & 1)  // CPython's centring
            }
            return .string(String(repeating: fill, count: left) + s + String(repeating: fill, count: margin - left))
        case (.removeprefix, .string(let s)), (.removesuffix, .string(let s)):
            guard case .string(let part)? = args.first else { throw EvaluationError("\(method.rawValue)() needs text") }
            if method == .removeprefix, PythonText.hasPrefix(s, part) { return .string(String(decoding: s.utf8.dropFirst(part.utf8.count), as: UTF8.self)) }
            if method == .removesuffix, !part.isEmpty, PythonText.hasSuffix(s, part) { return .string(String(decoding: s.utf8.dropLast(part.utf8.count), as: UTF8.self)) }
            return .string(s)
        case (.splitlines, .string(let s)):
            let keep = (args.first ?? keywords["keepends"])?.isTruthy ?? false
            return .list(PythonText.splitlines(s, keepEnds: keep).map(TemplateValue.string))
        case (.partition, .string(let s)), (.rpartition, .string(let s)):
            // Python gives a tuple; a template's tuples are lists here (indexing and unpacking read the same).
            guard case .string(let separator)? = args.first, !separator.isEmpty else { throw EvaluationError("\(method.rawValue)() needs a non-empty separator") }
            try EvaluationLimits.chargeSearch(separator, in: s, method.rawValue)
            let found = method == .partition ? s.utf8.firstRange(of: separator.utf8) : PythonText.lastRange(of: separator, in: s)
            guard let found else {
                return .list(method == .partition ? [.string(s), .string(""), .string("")] : [.string(""), .string(""), .string(s)])
            }
            return .list([.string(String(decoding: s.utf8[..<found.lowerBound], as: UTF8.self)), .string(separator),
                          .string(String(decoding: s.utf8[found.upperBound...], as: UTF8.self))])
        case (.zfill, .string(let s)):
            guard let width = args.first?.integer else { throw EvaluationError("zfill() needs a width") }
            guard width > s.count else { return .string(s) }
            try EvaluationLimits.checkLength(width, "zfill(\(width))")
            let sign = s.first == "-" || s.first == "+" ? String(s.prefix(1)) : ""
            let digits = s.dropFirst(sign.count)
            return .string(sign + String(repeating: "0", count: width - s.count) + digits)
        case (.items, .mapping(let m)): return .list(m.map { .list([.string($0.key), $0.value]) })
        case (.keys, .mapping(let m)): return .list(m.keys.map(TemplateValue.string))
        case (.values, .mapping(let m)): return .list(m.orderedValues)
        default:
            throw EvaluationError("\(value.typeName) \(value.repr) has no method \(method.rawValue)()")
        }
    }

    /// `split`'s and `rsplit`'s (sep=None, maxsplit=-1), positional or by keyword.
    private static func splitArguments(_ name: String, _ args: [TemplateValue], _ keywords: [String: TemplateValue]) throws(EvaluationError) -> (String?, Int) {
        guard args.count <= 2, Set(keywords.keys).isSubset(of: ["sep", "maxsplit"]),
              !(args.count >= 1 && keywords["sep"] != nil), !(args.count == 2 && keywords["maxsplit"] != nil) else {
            throw EvaluationError("\(name)() takes sep and maxsplit")
        }
        var separator: String?
        switch args.first ?? keywords["sep"] ?? .none {
        case .none: separator = nil
        case .string(let text): separator = text
        case let other: throw EvaluationError("\(name)(): must be str or None, not \(other.pythonTypeName)")
        }
        var limit = -1
        switch args.count > 1 ? args[1] : keywords["maxsplit"] ?? .int(-1) {
        case .int(let n): limit = n
        case .bool(let b): limit = b ? 1 : 0
        case let other: throw EvaluationError("\(name)(): maxsplit must be an integer, not \(other.pythonTypeName)")
        }
        return (separator, limit)
    }
}
