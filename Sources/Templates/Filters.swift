import Glibc
import FoundationEssentials
import Platform

/// The filters of the template language (`value | filter(args)`), with Home Assistant's semantics:
/// `float` and `int` of a non-number fail unless given a default.
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
        case .default, .d:
            // Jinja's default replaces an undefined value (a failed lookup, caught by the evaluator), not None; with
            // boolean=true, anything falsy.
            let boolean = (args.count > 1 ? args[1] : keywords["boolean"])?.isTruthy ?? false
            if case .undefined = value { return fallback ?? .string("") }
            if boolean && !value.isTruthy { return fallback ?? .string("") }
            return value
        case .upper: return .string(value.text.uppercased())
        case .lower: return .string(value.text.lowercased())
        case .title: return .string(value.text.titleCased)
        case .capitalize:
            let s = value.text.lowercased()
            return .string(s.prefix(1).uppercased() + s.dropFirst())
        case .trim: return .string(value.text.trimmingWhitespace())
        case .replace:
            guard args.count >= 2 else { throw EvaluationError("replace needs two arguments: old and new") }
            return .string(try EvaluationLimits.replacing(args[0].text, with: args[1].text, in: value.text))
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
        case .timestampCustom:
            guard let epoch = Conversions.epoch(value, zone: context.timeZone) else {
                if let fallback = keywords["default"] ?? (args.count > 2 ? args[2] : nil) { return fallback }
                throw EvaluationError("timestamp_custom got \(value.typeName) \(value.repr), which is not a timestamp")
            }
            let format = args.first?.text ?? keywords["format_string"]?.text ?? "%Y-%m-%d %H:%M:%S"
            let local = (args.count > 1 ? args[1] : keywords["local"])?.isTruthy ?? true
            let offset = local ? Double(context.timeZone.secondsFromGMT(at: epoch)) : 0
            return .string(StrftimeFormat.format(format, epoch: epoch + offset, utcOffset: Int(offset),
                                                 zoneName: local ? context.timeZone.abbreviation(at: epoch) : "UTC"))
        case .asTimestamp:
            if let epoch = Conversions.epoch(value, zone: context.timeZone) { return .double(epoch) }
            if let fallback { return fallback }
            throw EvaluationError("as_timestamp got \(value.typeName) \(value.repr), which is not a date or time")
        case .asDatetime:
            // A datetime as it is; text keeps the offset it gives, or none (naive); a number is UTC.
            if case .datetime = value { return value }
            // A date at midnight, without a zone (datetime.combine(date, time(0, 0))).
            if case .date(let days) = value { return .datetime(Double(days) * 86_400, offset: TemplateValue.naive) }
            if case .string(let s) = value, let (t, offset) = Timestamp.parseISO8601(s.trimmingSpaces()) {
                return .datetime(t, offset: offset ?? TemplateValue.naive)
            }
            if let epoch = Conversions.epoch(value, zone: context.timeZone) { return .datetime(epoch) }
            if let fallback { return fallback }
            // Home Assistant (since 2024.2) gives None for a string it cannot read, an error for anything else.
            if case .string = value { return .none }
            throw EvaluationError("as_datetime got \(value.typeName) \(value.repr), which is not a date or time")
        case .asTimedelta:
            if let seconds = Conversions.duration(value) { return .timedelta(seconds) }
            if let fallback { return fallback }
            // Home Assistant's as_timedelta gives None for text it cannot read.
            if value.isText { return .none }
            throw EvaluationError("as_timedelta got \(value.typeName) \(value.repr), which is not a duration like 1:25:00")
        case .string: return .string(value.text)
        case .length, .count:
            switch value {
            case .string(let s): return .int(PythonText.length(s))
            case .list(let l): return .int(l.count)
            case .mapping(let m): return .int(m.count)
            case .undefined: return .int(0)
            default: throw EvaluationError("\(filter.rawValue) of \(value.typeName)")
            }
        case .join:
            // Any sequence (a string's characters, a mapping's keys, undefined's nothing), as Jinja's.
            var items = try TemplateRenderer.iterate(value)
            // join(d='', attribute=None), as Jinja's.
            if let attribute = keywords["attribute"]?.text {
                items = try items.map { item throws(EvaluationError) in try Sequences.attribute(item, attribute) ?? .none }
            }
            return .string(try EvaluationLimits.joining(items.map(\.text), separator: (args.first ?? keywords["d"])?.text ?? "", "join"))
        case .first, .last:
            // Any sequence; nothing in it is undefined, as Jinja's.
            let items = try TemplateRenderer.iterate(value)
            return (filter == .first ? items.first : items.last) ?? .undefined("No \(filter.rawValue) item, sequence was empty.")
        case .relativeTime, .timeSince, .timeUntil:
            // Home Assistant's: anything but a datetime comes back as it is, and so does one on the wrong side of now.
            guard case .datetime(let epoch, let offset) = value else { return value }
            let t = TemplateValue.instant(epoch, offset, zone: context.timeZone)
            // A naive datetime is read as local time first, and comes back so when it is on the wrong side of now.
            let shown: TemplateValue = offset == TemplateValue.naive ? .datetime(t, offset: context.timeZone.secondsFromGMT(at: t)) : value
            let precision = filter == .relativeTime ? 1 : ((args.first ?? keywords["precision"])?.integer ?? 1)
            let delta = filter == .timeUntil ? t - context.now : context.now - t
            guard delta >= 0 else { return shown }
            guard let seconds = Int(truncating: delta.rounded(.toNearestOrEven)), seconds >= 0 else { return value }
            return .string(TimeText.since(seconds, precision: precision))
        case .timedeltaString:
            // Home Assistant's timedelta_string(precision=1): a timedelta in words, its sign dropped; anything else as it is.
            guard case .timedelta(let delta) = value else { return value }
            let precision = (args.first ?? keywords["precision"])?.integer ?? 1
            guard let seconds = Int(truncating: Swift.abs(delta).rounded(.toNearestOrEven)) else { return value }
            return .string(TimeText.since(seconds, precision: precision))
        case .todayAt:
            // Local midnight today, at the time given (H:MM or H:MM:SS).
            let text = value.text
            let offset = context.timeZone.secondsFromGMT(at: context.now)
            let local = context.now + Double(offset)
            let midnight = (local / 86_400).rounded(.down) * 86_400 - Double(offset)
            guard !text.isEmpty else { return .datetime(midnight, offset: offset) }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0.trimmingSpaces()) }
            guard parts.count >= 2, parts.count <= 3, let hour = parts[0], let minute = parts[1], (0..<24).contains(hour),
                  (0..<60).contains(minute), parts.count == 2 || parts[2].map({ (0..<60).contains($0) }) == true else {
                throw EvaluationError("could not convert str to datetime: '\(text)'")
            }
            let second = parts.count == 3 ? parts[2]! : 0
            return .datetime(midnight + Double(hour * 3600 + minute * 60 + second), offset: offset)
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
        case .ord:
            let text = value.text
            guard text.unicodeScalars.count == 1, let scalar = text.unicodeScalars.first else {
                throw EvaluationError("ord() expected a character, but string of length \(text.count) found")
            }
            return .int(Int(scalar.value))
        case .base64Encode:
            return .string(Data(value.text.utf8).base64EncodedString())
        case .base64Decode:
            guard let data = Data(base64Encoded: value.text), let text = String(data: data, encoding: .utf8) else {
                throw EvaluationError("base64_decode got \(value.repr), which is not base64 of UTF-8 text")
            }
            return .string(text)
        case .truncate:
            // Jinja's truncate(length=255, killwords=False, end='...', leeway=5).
            let text = Array(value.text)
            let length = (args.first ?? keywords["length"])?.integer ?? 255
            let killwords = (args.count > 1 ? args[1] : keywords["killwords"])?.isTruthy ?? false
            let end = Array((args.count > 2 ? args[2] : keywords["end"])?.text ?? "...")
            let leeway = (args.count > 3 ? args[3] : keywords["leeway"])?.integer ?? 5
            guard length >= end.count, leeway >= 0 else { throw EvaluationError("truncate: expected length >= \(end.count), got \(length)") }
            if text.count <= length || text.count - length <= leeway { return value.isText ? value : .string(String(text)) }
            var kept = Array(text.prefix(length - end.count))
            if !killwords, let space = kept.lastIndex(of: " ") { kept = Array(kept[..<space]) }
            return .string(String(kept + end))
        case .center:
            let text = value.text
            let width = (args.first ?? keywords["width"])?.integer ?? 80
            guard width > text.count else { return .string(text) }
            try EvaluationLimits.checkLength(width, "center(\(width))")
            let margin = width - text.count
            // CPython: the odd space goes left when the width is odd.
            let left = margin / 2 + (margin & width & 1)
            return .string(String(repeating: " ", count: left) + text + String(repeating: " ", count: margin - left))
        case .wordcount:
            // Jinja counts runs of \w (letters, digits, underscore).
            var count = 0, inWord = false
            for c in value.text {
                let word = c.isLetter || c.isNumber || c == "_"
                if word && !inWord { count += 1 }
                inWord = word
            }
            return .int(count)
        case .map, .select, .reject, .selectattr, .rejectattr:
            let items = try TemplateRenderer.iterate(value)
            return .list(try Sequences.apply(filter, items, args, keywords, context: context))
        case .format:
            // Jinja's format filter: printf style, the arguments as the values.
            guard case .string(let format) = value else { throw EvaluationError("format needs text, got \(value.typeName)") }
            return .string(try PythonFormat.percent(format, args.count == 1 ? args[0] : .list(args)))
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
        case .slice:
            // Jinja's slice(n, fill_with=None): n columns, the first ones one longer.
            guard let n = (args.first ?? keywords["slices"])?.integer, n > 0, n <= EvaluationLimits.maximumTextLength else {
                throw EvaluationError("slice needs a number of slices from 1 to \(EvaluationLimits.maximumTextLength)")
            }
            let items = try TemplateRenderer.iterate(value)
            let fill = args.count > 1 ? args[1] : keywords["fill_with"]
            let per = items.count / n, extra = items.count % n
            var out: [TemplateValue] = []
            var start = 0
            for i in 0..<n {
                let length = per + (i < extra ? 1 : 0)
                var part = Array(items[start..<(start + length)])
                if let fill, i >= extra, extra > 0 { part.append(fill) }
                out.append(.list(part))
                start += length
            }
            return .list(out)
        case .urlencode:
            // Jinja's urlencode: a mapping (or pairs) as a query, other text quoted with / kept.
            if case .mapping(let members) = value {
                // Jinja's url_quote(for_qs=True): nothing safe, a space as +.
                return .string(members.keys.map { PercentEncoding.plus($0) + "=" + PercentEncoding.plus(members[$0]!.text) }
                    .joined(separator: "&"))
            }
            return .string(PercentEncoding.quote(value.text, safe: "/"))
        case .toJSON:
            // Home Assistant's to_json(ensure_ascii=False, pretty_print=False, sort_keys=False): orjson's compact text,
            // or json.dumps' when ASCII only is asked.
            let unknown = Set(keywords.keys).subtracting(["ensure_ascii", "pretty_print", "sort_keys"])
            guard args.count <= 3, unknown.isEmpty else { throw EvaluationError("to_json takes ensure_ascii, pretty_print and sort_keys") }
            func option(_ position: Int, _ name: String) -> Bool { (args.count > position ? args[position] : keywords[name])?.isTruthy ?? false }
            let ascii = option(0, "ensure_ascii")
            let style = TemplateJSON.Style(spaced: ascii, indented: option(1, "pretty_print"), sortKeys: option(2, "sort_keys"), asciiOnly: ascii)
            return .string(TemplateJSON.text(value, style))
        case .asLocal:
            guard case .datetime(let epoch, let offset) = value else { throw EvaluationError("as_local needs a datetime, got \(value.typeName) \(value.repr)") }
            // A naive datetime is taken to be local time, as Home Assistant's as_local does.
            let t = TemplateValue.instant(epoch, offset, zone: context.timeZone)
            return .datetime(t, offset: context.timeZone.secondsFromGMT(at: t))
        case .iif:
            // Home Assistant's iif(value, if_true=True, if_false=False, if_none): Python truthiness.
            let ifNone = args.count > 2 ? args[2] : keywords["if_none"]
            if value == .none, let ifNone { return ifNone }
            return value.isTruthy ? (args.first ?? keywords["if_true"] ?? .bool(true)) : (args.count > 1 ? args[1] : keywords["if_false"] ?? .bool(false))
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
        case .sort:
            guard case .list(let items) = value else { throw EvaluationError("sort needs a list, got \(value.typeName)") }
            let reverse = (args.first ?? keywords["reverse"])?.isTruthy ?? false
            let caseSensitive = (args.count > 1 ? args[1] : keywords["case_sensitive"])?.isTruthy ?? false
            let attribute = (args.count > 2 ? args[2] : keywords["attribute"])?.text
            // Jinja compares text without case unless told otherwise (by an attribute when given); a stable sort, as Python's.
            func key(_ item: TemplateValue) -> TemplateValue {
                let v = attribute.flatMap { (try? Sequences.attribute(item, $0)) ?? nil } ?? (attribute == nil ? item : .none)
                if case .string(let s) = v, !caseSensitive { return .string(s.lowercased()) }
                return v
            }
            return .list(try Sequences.stableSorted(items, by: key, reverse: reverse))
        case .list:
            switch value {
            case .list: return value
            case .string(let s): return .list(PythonText.characters(s).map(TemplateValue.string))
            case .mapping(let m): return .list(m.keys.map(TemplateValue.string))
            default: throw EvaluationError("\(value.typeName) \(value.repr) is not iterable")
            }
        case .unique:
            guard case .list(let items) = value else { throw EvaluationError("unique needs a list, got \(value.typeName)") }
            let caseSensitive = (args.first ?? keywords["case_sensitive"])?.isTruthy ?? false
            // Python's set: equal values (1, 1.0, True) are one; hashed, so a long list stays linear.
            var seen: Set<String> = []
            var out: [TemplateValue] = []
            for item in items {
                let k: TemplateValue = if case .string(let s) = item, !caseSensitive { .string(s.lowercased()) } else { item }
                guard seen.insert(k.identityKey).inserted else { continue }
                out.append(item)
            }
            return .list(out)
        case .regexMatch, .regexSearch:
            let pattern = args.first ?? keywords["find"] ?? .string("")
            let ignoreCase = (args.count > 1 ? args[1] : keywords["ignorecase"])?.isTruthy ?? false
            return .bool(filter == .regexMatch ? try RegularExpressions.match(value, pattern, ignoreCase: ignoreCase)
                                               : try RegularExpressions.search(value, pattern, ignoreCase: ignoreCase))
        case .regexReplace:
            let pattern = args.first ?? keywords["find"] ?? .string("")
            let replacement = (args.count > 1 ? args[1] : keywords["replace"]) ?? .string("")
            let ignoreCase = (args.count > 2 ? args[2] : keywords["ignorecase"])?.isTruthy ?? false
            return .string(try RegularExpressions.replace(value, pattern, with: replacement, ignoreCase: ignoreCase))
        case .regexFindall, .regexFindallIndex:
            let pattern = args.first ?? keywords["find"] ?? .string("")
            let indexed = filter == .regexFindallIndex
            let ignoreCase = (args.count > (indexed ? 2 : 1) ? args[indexed ? 2 : 1] : keywords["ignorecase"])?.isTruthy ?? false
            let found = try RegularExpressions.findAll(value, pattern, ignoreCase: ignoreCase)
            guard indexed else { return .list(found) }
            let index = (args.count > 1 ? args[1] : keywords["index"])?.integer ?? 0
            let position = index < 0 ? found.count + index : index
            guard found.indices.contains(position) else { throw EvaluationError("regex_findall_index: list index \(index) out of range (\(found.count) found)") }
            return found[position]
        case .slugify:
            return .string(try Slug.make(value, separator: (args.first ?? keywords["separator"])?.text ?? "_"))
        case .batch:
            return try Grouping.batch(try TemplateRenderer.iterate(value), args, keywords)
        case .groupby:
            return try Grouping.groupBy(try TemplateRenderer.iterate(value), args, keywords)
        case .dictsort:
            return try Grouping.dictSort(value, args, keywords)
        case .reverse:
            return try Grouping.reverse(value)
        case .flatten:
            return try Grouping.flatten(value, levels: (args.first ?? keywords["levels"])?.integer)
        case .indent:
            return .string(try Self.indent(value.text, args, keywords))
        case .multiply, .add:
            // Home Assistant's: float(value) times / plus the amount.
            guard let amount = args.first ?? keywords["amount"] else { throw EvaluationError("\(filter.rawValue) needs an amount") }
            let fallback = args.count > 1 ? args[1] : keywords["default"]
            guard let d = Conversions.float(value), !amount.isText else {
                if let fallback { return fallback }
                throw EvaluationError("\(filter.rawValue) got \(value.typeName) \(value.repr), which is not a number")
            }
            return try Arithmetic.apply(filter == .multiply ? .multiply : .add, .double(d), amount)
        case .contains:
            return try Arithmetic.apply(.contains, args.first ?? keywords["value"] ?? .none, value)
        case .ordinal:
            // Home Assistant's: 1st, 2nd, 3rd, 11th…, from the text's last digits.
            let text = value.text
            guard let last = text.last?.wholeNumberValue, let lastTwo = Int(String(text.suffix(2))) else {
                throw EvaluationError("ordinal needs a whole number, got \(value.typeName) \(value.repr)")
            }
            let suffixes = ["th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"]
            return .string(text + ((11...13).contains(lastTwo % 100) ? "th" : suffixes[last]))
        case .timestampLocal, .timestampUTC:
            // Home Assistant's: a number of seconds, as ISO 8601 in the local zone or UTC.
            guard !value.isText, let seconds = value.number, let epoch = Timestamp.checked(seconds) else {
                if let fallback { return fallback }
                throw EvaluationError("\(filter.rawValue) got \(value.typeName) \(value.repr), which is not a timestamp")
            }
            let offset = filter == .timestampLocal ? context.timeZone.secondsFromGMT(at: epoch) : 0
            return .string(Timestamp.iso8601(epoch, offset: offset))
        case .asin, .acos, .atan, .atan2:
            return try Self.trigonometry(filter, value, args, keywords)
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
        }
    }
}

/// Home Assistant's "2 hours", "1 day 3 hours" (dt_util._get_timestring): the largest units first, the last rounded.
extension Filters {
    /// Filters that fail on an undefined value: they make a number or a time of it.
    static let failOnUndefined: Set<Filter> = [
        .float, .int, .round, .abs, .sqrt, .log, .sin, .cos, .tan, .asin, .acos, .atan, .atan2, .timestampCustom, .timestampLocal,
        .timestampUTC, .asTimestamp, .asDatetime, .asLocal, .asTimedelta, .multiply, .add, .bitwiseAnd, .bitwiseOr, .bitwiseXor, .ordinal,
        .isNumber, .relativeTime, .timeSince, .timeUntil, .todayAt, .base64Decode, .ord,
    ]

    /// Jinja's `indent(width=4, first=False, blank=False)`: lines after the first indented, blank ones left alone.
    static func indent(_ text: String, _ args: [TemplateValue], _ keywords: [String: TemplateValue]) throws(EvaluationError) -> String {
        let width = args.first ?? keywords["width"] ?? .int(4)
        let first = (args.count > 1 ? args[1] : keywords["first"])?.isTruthy ?? false
        let blank = (args.count > 2 ? args[2] : keywords["blank"])?.isTruthy ?? false
        let indentation: String
        if case .string(let s) = width { indentation = s } else {
            guard let n = width.integer else { throw EvaluationError("indent's width must be a number or text") }
            try EvaluationLimits.checkLength(n, "indent(\(n))")
            indentation = String(repeating: " ", count: max(0, n))
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Checked before it is built: every line may take the indentation.
        let (added, overflow) = indentation.utf8.count.multipliedReportingOverflow(by: lines.count)
        try EvaluationLimits.checkLength(overflow ? .max : text.utf8.count + added, "indent")
        let body = lines.enumerated().map { i, line in
            (i == 0 && !first) || (line.isEmpty && !blank) ? line : indentation + line
        }
        let out = body.joined(separator: "\n")
        try EvaluationLimits.checkLength(out.count, "indent")
        return out
    }

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

enum TimeText {
    static let units: [(name: String, seconds: Int)] = [("year", 365 * 86_400), ("month", 30 * 86_400), ("day", 86_400),
                                                        ("hour", 3600), ("minute", 60), ("second", 1)]

    /// Home Assistant 2026's `_get_timestring`: rounded at the last unit shown first, so a round-up carries into the
    /// larger units (23:59:55 is "1 day", not "24 hours"); twelve rounded months end the year.
    static func since(_ total: Int, precision: Int) -> String {
        guard total != 0 else { return "0 seconds" }
        func counted(_ n: Int, _ unit: String) -> String { n == 1 ? "1 \(unit) " : "\(n) \(unit)s " }
        let year = units[0].seconds, month = units[1].seconds
        var timediff = total, remainder = total, used = 0
        for unit in units where remainder >= unit.seconds {
            used += 1
            if used == precision {
                let months = (timediff % year) / month
                let (step, overflow) = Int((Double(remainder) / Double(unit.seconds)).rounded(.toNearestOrEven)).multipliedReportingOverflow(by: unit.seconds)
                if !overflow { timediff = timediff &+ step - remainder }
                let roundedMonths = (timediff % year) / month
                if roundedMonths >= 12, months < 12 || unit.seconds == month { timediff = timediff &+ year - timediff % year }
                break
            }
            remainder %= unit.seconds
        }
        var out = ""
        used = 0
        for unit in units where timediff >= unit.seconds {
            used += 1
            if used == precision {
                return (out + counted(Int((Double(timediff) / Double(unit.seconds)).rounded(.toNearestOrEven)), unit.name)).trimmingWhitespace()
            }
            let whole = timediff / unit.seconds
            out += counted(whole, unit.name)
            timediff -= whole * unit.seconds
        }
        return out.trimmingWhitespace()
    }
}

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

/// `round(x, precision, method)` as Home Assistant's filter computes it, total over every Double and precision.
enum Rounding {
    static func round(_ d: Double, precision: Int, method: String) -> Double {
        guard d.isFinite else { return d }
        // "half" ignores the precision, as Home Assistant's does.
        if method == "half" { return (d * 2).rounded(.toNearestOrEven) / 2 }
        // Beyond these a Double has no digits left to round (Python returns x), or every digit is rounded away (0).
        if precision > 330 { return d }
        if precision < -330 { return 0 * d }
        // Python's round: the exact binary value rounded to that many decimals, ties to even (2.675 → 2.67, as
        // 2.675 is 2.67499…); printf rounds the same exact value the same way.
        if method == "common", precision >= 0 {
            var buffer = [CChar](repeating: 0, count: 1_100)
            let written = withVaList([Int32(precision), d]) { vsnprintf(&buffer, buffer.count, "%.*f", $0) }
            if written > 0, written < buffer.count, let exact = Double(String(decoding: buffer.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)) { return exact }
        }
        let scale = Glibc.pow(10.0, Double(precision))
        let scaled = d * scale
        guard scaled.isFinite else { return d }
        let rounded: Double = switch method {
        case "ceil": scaled.rounded(.up)
        case "floor": scaled.rounded(.down)
        default: scaled.rounded(.toNearestOrEven)
        }
        return rounded / scale
    }
}

/// Python's strftime for the directives people use in `timestamp_custom`.
enum StrftimeFormat {
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    static let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    static func format(_ format: String, epoch: Double, utcOffset: Int?, zoneName: String = "") -> String {
        let c = Timestamp.components(epoch)
        var out = ""
        var chars = Array(format)[...]
        while let ch = chars.popFirst() {
            guard ch == "%" else { out.append(ch); continue }
            // glibc's flags, which Python's strftime passes through: - (no padding), _ (spaces), 0 (zeros), ^ (upper case).
            var flag: Character?
            if let f = chars.first, "-_0^#".contains(f) { flag = f; chars.removeFirst() }
            guard let directive = chars.popFirst() else { out.append("%"); if let flag { out.append(flag) }; break }
            guard let text = field(directive, c, epoch: epoch, utcOffset: utcOffset, zoneName: zoneName, format: format) else {
                out += "%" + (flag.map(String.init) ?? "") + String(directive)
                continue
            }
            out += apply(flag, to: text, directive: directive)
        }
        return out
    }

    /// The text of one directive with its C-locale padding; nil for a directive glibc does not know (left as written).
    private static func field(_ d: Character, _ c: Timestamp.Components, epoch: Double, utcOffset: Int?, zoneName: String,
                              format: String) -> String? {
        func pad(_ n: Int, _ w: Int = 2, _ fill: Character = "0") -> String {
            let s = String(n)
            return String(repeating: fill, count: max(0, w - s.count)) + s
        }
        let hour12 = c.hour % 12 == 0 ? 12 : c.hour % 12
        switch d {
        case "Y": return String(c.year)
        case "C": return pad(c.year / 100)
        case "y": return pad(c.year % 100)
        case "m": return pad(c.month)
        case "d": return pad(c.day)
        case "e": return pad(c.day, 2, " ")
        case "H": return pad(c.hour)
        case "k": return pad(c.hour, 2, " ")
        case "I": return pad(hour12)
        case "l": return pad(hour12, 2, " ")
        case "M": return pad(c.minute)
        case "S": return pad(c.second)
        case "f": return pad(c.microsecond, 6)
        case "p": return c.hour < 12 ? "AM" : "PM"
        case "P": return c.hour < 12 ? "am" : "pm"
        case "b", "h": return String(months[c.month - 1].prefix(3))
        case "B": return months[c.month - 1]
        case "a": return String(weekdays[c.weekday].prefix(3))
        case "A": return weekdays[c.weekday]
        case "j": return pad(c.dayOfYear, 3)
        case "w": return String((c.weekday + 1) % 7)
        case "u": return String(c.weekday + 1)
        case "U": return pad((c.dayOfYear + 6 - (c.weekday + 1) % 7) / 7)
        case "W": return pad((c.dayOfYear + 6 - c.weekday) / 7)
        case "V", "G", "g":
            let (year, week) = isoWeek(c)
            return d == "V" ? pad(week) : d == "G" ? String(year) : pad(year % 100)
        case "D", "x": return pad(c.month) + "/" + pad(c.day) + "/" + pad(c.year % 100)
        case "F": return String(c.year) + "-" + pad(c.month) + "-" + pad(c.day)
        case "R": return pad(c.hour) + ":" + pad(c.minute)
        case "T", "X": return pad(c.hour) + ":" + pad(c.minute) + ":" + pad(c.second)
        case "r": return pad(hour12) + ":" + pad(c.minute) + ":" + pad(c.second) + " " + (c.hour < 12 ? "AM" : "PM")
        case "c":
            return String(weekdays[c.weekday].prefix(3)) + " " + String(months[c.month - 1].prefix(3)) + " " + pad(c.day, 2, " ") + " "
                + pad(c.hour) + ":" + pad(c.minute) + ":" + pad(c.second) + " " + String(c.year)
        case "s": return String(Int64((epoch - Double(utcOffset ?? 0)).rounded(.down)))
        case "n": return "\n"
        case "t": return "\t"
        case "z":
            guard let utcOffset else { return "" }
            let sign = utcOffset < 0 ? "-" : "+"
            return sign + pad(Swift.abs(utcOffset) / 3600) + pad(Swift.abs(utcOffset) % 3600 / 60)
        case "Z": return zoneName
        case "%": return "%"
        default: return nil
        }
    }

    /// ISO 8601's week-numbering year and week.
    private static func isoWeek(_ c: Timestamp.Components) -> (Int, Int) {
        let isoWeekday = c.weekday + 1  // Monday 1 … Sunday 7
        var week = (c.dayOfYear - isoWeekday + 10) / 7
        var year = c.year
        func weeks(_ y: Int) -> Int {
            // A year has 53 weeks when it starts on a Thursday, or on a Wednesday in a leap year.
            let jan1 = Timestamp.components(Double(Timestamp.daysSinceEpoch(year: Int64(y), month: 1, day: 1)) * 86_400).weekday
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
            return jan1 == 3 || (leap && jan1 == 2) ? 53 : 52
        }
        if week < 1 { year -= 1; week = weeks(year) } else if week > weeks(year) { year += 1; week = 1 }
        return (year, week)
    }

    /// glibc's flags on a directive's text: `-` drops the padding, `_` pads with spaces, `0` with zeros, `^` upper case.
    private static func apply(_ flag: Character?, to text: String, directive: Character) -> String {
        switch flag {
        case "-":
            guard text.count > 1, "dmHIMSjyCeklUWVgyf".contains(directive) else { return text }
            let trimmed = text.drop { $0 == "0" || $0 == " " }
            return trimmed.isEmpty ? "0" : String(trimmed)
        case "_":
            guard "dmHIMSjyCUWVg".contains(directive) else { return text }
            let digits = text.drop { $0 == "0" }
            return String(repeating: " ", count: text.count - max(digits.count, 1)) + (digits.isEmpty ? "0" : String(digits))
        case "0":
            return String(text.map { $0 == " " ? "0" : $0 })
        case "^":
            return text.uppercased()
        default:
            return text
        }
    }
}
