import Glibc
import FoundationEssentials

/// The filters of lists and mappings: length, joining, sorting, grouping, slicing, map/select, with Home Assistant's semantics.
enum SequenceFilters {
    /// `value | filter(args)`, or nil when `filter` is not of this family. `fallback` is the first argument or the
    /// `default` keyword, which several filters return instead of failing.
    static func apply(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      fallback: TemplateValue?, context: EvaluationContext) throws(EvaluationError) -> TemplateValue? {
        switch filter {
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
        case .items:
            // Jinja's items: a mapping's (key, value) pairs in order (as lists: a template's pairs print as lists).
            guard case .mapping(let members) = value else {
                if case .undefined = value { return .list([]) }
                throw EvaluationError("items can only get item pairs from a mapping, got \(value.typeName)")
            }
            return .list(members.map { .list([.string($0.key), $0.value]) })
        case .random:
            // Home Assistant's random: one item of a sequence, chosen anew at every render (Python's random.choice).
            let items: [TemplateValue]
            switch value {
            case .list(let list): items = list
            case .string(let text): items = PythonText.characters(text).map(TemplateValue.string)
            default: throw EvaluationError("random needs a list or text, got \(value.typeName)")
            }
            guard let chosen = items.randomElement() else { throw EvaluationError("random of an empty sequence: cannot choose from it") }
            return chosen
        case .map, .select, .reject, .selectattr, .rejectattr:
            let items = try TemplateRenderer.iterate(value)
            return .list(try Sequences.apply(filter, items, args, keywords, context: context))
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
        default: return nil
        }
    }
}
