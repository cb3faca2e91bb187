import Platform

/// Home Assistant's `regex_match`, `regex_search`, `regex_replace`, `regex_findall`, `regex_findall_index` and the
/// `match`/`search` tests, with Python's `re` semantics: `match` anchors at the start only, `findall` gives the groups
/// when there are any, a replacement reads `\1` and `\g<name>`.
///
/// Patterns are Python's syntax, read by `PatternParser` and matched by `PatternMatcher` code point by code point as
/// Python matches, within a step budget: no text from an entity can make a match run away. Compiled patterns are
/// cached as Home Assistant caches them (128, by pattern and flag).
public enum RegularExpressions {
    static func match(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> Bool {
        var scan = try Scan(value, pattern, ignoreCase: ignoreCase)
        return try scan.next(anchored: true) != nil
    }

    static func search(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> Bool {
        var scan = try Scan(value, pattern, ignoreCase: ignoreCase)
        return try scan.next(anchored: false) != nil
    }

    /// `re.findall`: the whole matches, or the one group's text, or each match's groups as a list.
    static func findAll(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> [TemplateValue] {
        var scan = try Scan(value, pattern, ignoreCase: ignoreCase)
        var found: [TemplateValue] = []
        var length = 0
        while let groups = try scan.next(anchored: false) {
            let texts = groups.dropFirst().map { TemplateValue.string(scan.text($0)) }
            switch texts.count {
            case 0: found.append(.string(scan.text(groups[0])))
            case 1: found.append(texts[0])
            default: found.append(.list(texts))
            }
            length += max(1, groups[0].map(\.count) ?? 0)
            try EvaluationLimits.checkLength(length, "regex_findall")
        }
        return found
    }

    /// `re.sub(pattern, replacement, text)`.
    static func replace(_ value: TemplateValue, _ pattern: TemplateValue, with replacement: TemplateValue,
                        ignoreCase: Bool) throws(EvaluationError) -> String {
        var scan = try Scan(value, pattern, ignoreCase: ignoreCase)
        let template = try ReplacementTemplate(replacement.text)
        var out: [Unicode.Scalar] = []
        var last = 0
        while let groups = try scan.next(anchored: false) {
            let whole = groups[0]!
            out.append(contentsOf: scan.scalars[last..<whole.lowerBound])
            try template.expand(groups, names: scan.program.groupNames, from: scan.scalars, into: &out)
            try EvaluationLimits.checkLength(out.count, "regex_replace")
            last = whole.upperBound
        }
        out.append(contentsOf: scan.scalars[last...])
        try EvaluationLimits.checkLength(out.count, "regex_replace")
        return String(String.UnicodeScalarView(out))
    }

    /// Successive matches over one text, as `re.finditer` finds them, within one `PatternMatcher`'s budget.
    private struct Scan {
        let program: PatternProgram
        let scalars: [Unicode.Scalar]
        let source: String
        var matcher: PatternMatcher
        var position = 0
        var previousEmptyAt: Int?
        var finished = false

        init(_ value: TemplateValue, _ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) {
            program = try RegularExpressions.compiled(pattern, ignoreCase: ignoreCase)
            scalars = Array(value.text.unicodeScalars)
            source = pattern.text
            matcher = PatternMatcher(program, text: scalars)
        }

        mutating func next(anchored: Bool) throws(EvaluationError) -> [Range<Int>?]? {
            guard !finished else { return nil }
            let groups: [Range<Int>?]?
            do {
                groups = try matcher.search(from: position, anchored: anchored, forbidEmptyAt: previousEmptyAt)
            } catch {
                throw EvaluationError("regular expression \(TemplateValue.string(source).repr) \(error.message)")
            }
            try RenderBudget.spend(matcher.steps / 64 + 1, "a regular expression")
            guard let groups, let whole = groups[0] else { finished = true; return nil }
            position = whole.upperBound
            previousEmptyAt = whole.isEmpty ? whole.lowerBound : nil
            if whole.isEmpty, whole.lowerBound == scalars.count { finished = true }
            return groups
        }

        func text(_ range: Range<Int>?) -> String {
            guard let range else { return "" }
            return String(String.UnicodeScalarView(scalars[range]))
        }
    }

    // MARK: Compiling

    private struct Key: Hashable { let pattern: String; let ignoreCase: Bool }
    private static let cache = Locked<[Key: PatternProgram]>([:])

    private static func compiled(_ pattern: TemplateValue, ignoreCase: Bool) throws(EvaluationError) -> PatternProgram {
        let key = Key(pattern: pattern.text, ignoreCase: ignoreCase)
        if let hit = cache.withLock({ $0[key] }) { return hit }
        let program: PatternProgram
        do {
            program = try PatternProgram(key.pattern, ignoreCase: ignoreCase)
        } catch {
            throw EvaluationError("invalid regular expression \(pattern.repr): \(error)")
        }
        cache.withLock { cache in
            if cache.count >= 128 { cache.removeAll(keepingCapacity: true) }
            cache[key] = program
        }
        return program
    }
}

/// Python's replacement text for `re.sub`: `\1`…`\99`, `\g<1>`, `\g<name>`, `\n`, `\t`, `\\`; other escapes of
/// letters are errors, as in Python; a group that did not take part gives empty text.
private struct ReplacementTemplate {
    enum Piece { case text(String), group(Int), named(String) }
    let pieces: [Piece]

    init(_ source: String) throws(EvaluationError) {
        var pieces: [Piece] = []
        var text = String.UnicodeScalarView()
        // Scalars, as Python reads it: "\\2\u{20D7}" is group 2 and a combining mark, not one Character.
        var chars = Array(source.unicodeScalars)[...]
        func flush() { if !text.isEmpty { pieces.append(.text(String(text))); text = String.UnicodeScalarView() } }
        func isDigit(_ c: Unicode.Scalar) -> Bool { (48...57).contains(c.value) }
        while let c = chars.popFirst() {
            guard c == "\\" else { text.append(c); continue }
            guard let next = chars.popFirst() else { throw EvaluationError("bad escape (end of pattern) in replacement \"\(source)\"") }
            switch next {
            case _ where isDigit(next):
                var group = Int(next.value - 48)
                if let more = chars.first, isDigit(more) { group = group * 10 + Int(more.value - 48); chars.removeFirst() }
                flush()
                pieces.append(.group(group))
            case "g":
                guard chars.popFirst() == "<", let close = chars.firstIndex(of: ">") else {
                    throw EvaluationError("missing group name after \\g in replacement \"\(source)\"")
                }
                let name = String(String.UnicodeScalarView(chars[..<close]))
                chars = chars[(close + 1)...]
                flush()
                pieces.append(Int(name).map(Piece.group) ?? .named(name))
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "\\": text.append("\\")
            default:
                if next.isASCII, next.properties.isAlphabetic { throw EvaluationError("bad escape \\\(next) in replacement \"\(source)\"") }
                text.append("\\")
                text.append(next)
            }
        }
        flush()
        self.pieces = pieces
    }

    func expand(_ groups: [Range<Int>?], names: [String: Int], from text: [Unicode.Scalar],
                into out: inout [Unicode.Scalar]) throws(EvaluationError) {
        for piece in pieces {
            let group: Int
            switch piece {
            case .text(let t): out.append(contentsOf: t.unicodeScalars); continue
            case .group(let i):
                guard i < groups.count else { throw EvaluationError("invalid group reference \(i) in regex_replace") }
                group = i
            case .named(let name):
                guard let i = names[name] else { throw EvaluationError("unknown group name '\(name)' in regex_replace") }
                group = i
            }
            if let range = groups[group] { out.append(contentsOf: text[range]) }
            try EvaluationLimits.checkLength(out.count, "regex_replace")
        }
    }
}
