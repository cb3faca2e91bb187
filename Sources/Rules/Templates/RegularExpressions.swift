import Platform

/// Home Assistant's `regex_match`, `regex_search`, `regex_replace`, `regex_findall`, `regex_findall_index` and the
/// `match`/`search` tests, with Python's `re` semantics: `match` anchors at the start only, `findall` gives the groups
/// when there are any, a replacement reads `\1` and `\g<name>`.
///
/// Patterns are Swift's `Regex` syntax, which reads Python's for what templates use (classes, groups, `(?P<name>…)`,
/// look-around, `(?i)`), matched by Unicode scalar as Python matches code points. Compiled patterns are cached as
/// Home Assistant caches them (128, by pattern and flag).
enum RegularExpressions {
    static func match(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> Bool {
        let regex = try compiled(pattern, ignoreCase: ignoreCase)
        return (try? regex.prefixMatch(in: value.text)) != nil
    }

    static func search(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> Bool {
        let regex = try compiled(pattern, ignoreCase: ignoreCase)
        return (try? regex.firstMatch(in: value.text)) != nil
    }

    /// `re.findall`: the whole matches, or the one group's text, or each match's groups as a list.
    static func findAll(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> [TemplateValue] {
        let regex = try compiled(pattern, ignoreCase: ignoreCase)
        return value.text.matches(of: regex.regex).map { match in
            let groups = match.output.dropFirst().map { TemplateValue.string($0.substring.map(String.init) ?? "") }
            switch groups.count {
            case 0: return .string(String(match.output[0].substring ?? ""))
            case 1: return groups[0]
            default: return .list(groups)
            }
        }
    }

    /// `re.sub(pattern, replacement, text)`.
    static func replace(_ value: TemplateValue, _ pattern: TemplateValue, with replacement: TemplateValue,
                        ignoreCase: Bool) throws(EvaluationError) -> String {
        let regex = try compiled(pattern, ignoreCase: ignoreCase)
        let template = try ReplacementTemplate(replacement.text)
        let text = value.text
        var out = ""
        var last = text.startIndex
        for match in text.matches(of: regex.regex) {
            out += text[last..<match.range.lowerBound]
            out += try template.expand(match.output)
            try EvaluationLimits.checkLength(out.count, "regex_replace")
            last = match.range.upperBound
        }
        out += text[last...]
        try EvaluationLimits.checkLength(out.count, "regex_replace")
        return out
    }

    // MARK: Compiling

    private struct Key: Hashable { let pattern: String; let ignoreCase: Bool }
    private static let cache = Locked<[Key: CompiledPattern]>([:])

    /// A compiled pattern. `Regex` holds no mutable state once built, so sharing it between threads is safe.
    struct CompiledPattern: @unchecked Sendable {
        let regex: Regex<AnyRegexOutput>
        func prefixMatch(in text: String) throws -> Regex<AnyRegexOutput>.Match? { try regex.prefixMatch(in: text) }
        func firstMatch(in text: String) throws -> Regex<AnyRegexOutput>.Match? { try regex.firstMatch(in: text) }
    }

    private static func compiled(_ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> CompiledPattern {
        let key = Key(pattern: pattern.text, ignoreCase: ignoreCase)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let regex: Regex<AnyRegexOutput>
        do {
            regex = try Regex(key.pattern).matchingSemantics(.unicodeScalar).ignoresCase(ignoreCase)
        } catch {
            throw EvaluationError("invalid regular expression \(pattern.repr): \(error)")
        }
        let compiled = CompiledPattern(regex: regex)
        cache.withLock { cache in
            if cache.count >= 128 { cache.removeAll(keepingCapacity: true) }
            cache[key] = compiled
        }
        return compiled
    }
}

/// Python's replacement text for `re.sub`: `\1`…`\99`, `\g<1>`, `\g<name>`, `\n`, `\t`, `\\`; other escapes of
/// letters are errors, as in Python; a group that did not take part gives empty text.
private struct ReplacementTemplate {
    enum Piece { case text(String), group(Int), named(String) }
    let pieces: [Piece]

    init(_ source: String) throws(EvaluationError) {
        var pieces: [Piece] = []
        var text = ""
        var chars = Array(source)[...]
        func flush() { if !text.isEmpty { pieces.append(.text(text)); text = "" } }
        while let c = chars.popFirst() {
            guard c == "\\" else { text.append(c); continue }
            guard let next = chars.popFirst() else { throw EvaluationError("bad escape (end of pattern) in replacement \"\(source)\"") }
            switch next {
            case "0"..."9":
                var digits = String(next)
                if let more = chars.first, more.isASCII, more.isNumber { digits.append(more); chars.removeFirst() }
                flush()
                pieces.append(.group(Int(digits)!))
            case "g":
                guard chars.popFirst() == "<", let close = chars.firstIndex(of: ">") else {
                    throw EvaluationError("missing group name after \\g in replacement \"\(source)\"")
                }
                let name = String(chars[..<close])
                chars = chars[(close + 1)...]
                flush()
                pieces.append(Int(name).map(Piece.group) ?? .named(name))
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "\\": text.append("\\")
            default:
                if next.isASCII, next.isLetter { throw EvaluationError("bad escape \\\(next) in replacement \"\(source)\"") }
                text.append("\\")
                text.append(next)
            }
        }
        flush()
        self.pieces = pieces
    }

    func expand(_ output: AnyRegexOutput) throws(EvaluationError) -> String {
        var out = ""
        for piece in pieces {
            switch piece {
            case .text(let t): out += t
            case .group(let i):
                guard i < output.count else { throw EvaluationError("invalid group reference \(i) in regex_replace") }
                out += output[i].substring ?? ""
            case .named(let name):
                guard let group = output[name] else { throw EvaluationError("unknown group name '\(name)' in regex_replace") }
                out += group.substring ?? ""
            }
        }
        return out
    }
}
