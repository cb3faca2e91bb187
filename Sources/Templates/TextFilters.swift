import Glibc
import FoundationEssentials
import Platform

/// The filters of text: case, trimming, replacing, encoding, regular expressions, layout, with Home Assistant's semantics.
enum TextFilters {
    /// `value | filter(args)`, or nil when `filter` is not of this family. `fallback` is the first argument or the
    /// `default` keyword, which several filters return instead of failing.
    static func apply(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      fallback: TemplateValue?, context: EvaluationContext) throws(EvaluationError) -> TemplateValue? {
        switch filter {
        case .upper: return .string(value.text.uppercased())
        case .lower: return .string(PythonText.lower(value.text))
        case .title: return .string(value.text.titleCased)
        case .capitalize:
            let s = value.text.lowercased()
            return .string(s.prefix(1).uppercased() + s.dropFirst())
        case .trim: return .string(value.text.trimmingWhitespace())
        case .replace:
            guard args.count >= 2 else { throw EvaluationError("replace needs two arguments: old and new") }
            return .string(try EvaluationLimits.replacing(args[0].text, with: args[1].text, in: value.text))
        case .string: return .string(value.text)
        case .escape, .e, .forceescape:
            // markupsafe's escape of the value's str(): & < > " ' as entities. The result is plain text here (Jinja's
            // is markup, which a second escape leaves as it is).
            guard args.isEmpty, keywords.isEmpty else { throw EvaluationError("\(filter.rawValue) takes no arguments") }
            let text = value.text
            try RenderBudget.spendBuilding(text.utf8.count * 5, "the \(filter.rawValue) filter")
            return .string(Self.htmlEscaped(text))
        case .safe:
            guard args.isEmpty, keywords.isEmpty else { throw EvaluationError("safe takes no arguments") }
            // Jinja's safe marks str(value) as markup; with autoescape off (Home Assistant's), it prints as it is.
            if case .string = value { return value }
            return .string(value.text)
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
        case .format:
            // Jinja's format filter: printf style, the arguments as the values.
            guard case .string(let format) = value else { throw EvaluationError("format needs text, got \(value.typeName)") }
            return .string(try PythonFormat.percent(format, args.count == 1 ? args[0] : .list(args)))
        case .urlencode:
            // Jinja's urlencode: a mapping (or pairs) as a query, other text quoted with / kept.
            if case .mapping(let members) = value {
                // Jinja's url_quote(for_qs=True): nothing safe, a space as +.
                return .string(members.keys.map { PercentEncoding.plus($0) + "=" + PercentEncoding.plus(members[$0]!.text) }
                    .joined(separator: "&"))
            }
            return .string(PercentEncoding.quote(value.text, safe: "/"))
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
        case .indent:
            return .string(try Self.indent(value.text, args, keywords))
        case .contains:
            return try Arithmetic.apply(.contains, args.first ?? keywords["value"] ?? .none, value)
        default: return nil
        }
    }
}

extension TextFilters {
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
}

extension TextFilters {
    /// markupsafe's escape: `&`, `<`, `>`, `"` and `'` as `&amp;`, `&lt;`, `&gt;`, `&#34;` and `&#39;`.
    static func htmlEscaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">")
            || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&#34;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
