/// Reads Python's `re` syntax (as of Python 3.13, what Home Assistant runs): classes, groups (`(?P<name>…)`,
/// `(?:…)`, `(?>…)`), look-around, backreferences (`\1`, `(?P=name)`), greedy, lazy and possessive quantifiers,
/// inline flags (`(?aimsx)` at the start, `(?i:…)` anywhere) and Python's errors for what it refuses.
struct PatternParser {
    struct Flags {
        var ignoreCase = false
        var multiline = false
        var dotAll = false
        var verbose = false
        var ascii = false
    }

    /// Deeper nesting than this is refused: the parser and the matcher recurse by it.
    static let maximumDepth = 100
    /// Counted repeats beyond this are refused (Python's own limit is 4,294,967,295; no template needs more).
    static let maximumRepeat = 100_000

    private let scalars: [Unicode.Scalar]
    private var i = 0
    private var flags: Flags
    private(set) var groupCount = 0
    private(set) var groupNames: [String: Int] = [:]
    private var openGroups: Set<Int> = []
    private var depth = 0

    init(_ source: String, ignoreCase: Bool) {
        scalars = Array(source.unicodeScalars)
        flags = Flags(ignoreCase: ignoreCase)
    }

    mutating func parse() throws(PatternError) -> PatternNode {
        try readGlobalFlags()
        let node = try alternation()
        if i < scalars.count {
            throw PatternError(message: "unbalanced parenthesis", position: i)
        }
        return node
    }

    // MARK: Structure

    private mutating func alternation() throws(PatternError) -> PatternNode {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw PatternError(message: "too many nested groups (more than \(Self.maximumDepth))", position: i) }
        var branches = [try sequence()]
        while peek == "|" {
            i += 1
            branches.append(try sequence())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    private mutating func sequence() throws(PatternError) -> PatternNode {
        var items: [PatternNode] = []
        while let c = peek, c != "|", c != ")" {
            if flags.verbose, skipVerbose() { continue }
            let start = i
            guard let atom = try atom() else { continue }
            items.append(try quantified(atom, at: start))
        }
        return items.count == 1 ? items[0] : (items.isEmpty ? .empty : .sequence(items))
    }

    /// `X*`, `X+?`, `X{2,5}+`…: Python refuses a quantifier with nothing to repeat and two in a row.
    private mutating func quantified(_ atom: PatternNode, at start: Int) throws(PatternError) -> PatternNode {
        var node = atom
        var repeated = false
        while true {
            if flags.verbose { while skipVerbose() {} }
            let at = i
            guard let (min, max) = try quantifier() else { return node }
            if repeated { throw PatternError(message: "multiple repeat", position: at) }
            if case .assertion = atom { throw PatternError(message: "nothing to repeat", position: at) }
            if case .empty = atom { throw PatternError(message: "nothing to repeat", position: at) }
            var greedy = true, possessive = false
            if peek == "?" { greedy = false; i += 1 } else if peek == "+" { possessive = true; i += 1 }
            node = .repetition(node, min: min, max: max, greedy: greedy, possessive: possessive)
            repeated = true
        }
    }

    private mutating func quantifier() throws(PatternError) -> (Int, Int?)? {
        switch peek {
        case "*": i += 1; return (0, nil)
        case "+": i += 1; return (1, nil)
        case "?": i += 1; return (0, 1)
        case "{":
            // `{m}`, `{m,}`, `{,n}`, `{m,n}`; anything else is a literal brace.
            let save = i
            i += 1
            let low = digits()
            var high: String?
            let comma = peek == ","
            if comma { i += 1; high = digits() }
            guard peek == "}" else { i = save; return nil }
            i += 1
            if low.isEmpty && !comma { i = save; return nil }
            let min = low.isEmpty ? 0 : try count(low, at: save)
            let max: Int? = comma ? (high!.isEmpty ? nil : try count(high!, at: save)) : min
            if let max, max < min { throw PatternError(message: "min repeat greater than max repeat", position: save + 1) }
            return (min, max)
        default: return nil
        }
    }

    private func count(_ text: String, at position: Int) throws(PatternError) -> Int {
        guard text.count <= 9, let n = Int(text), n <= Self.maximumRepeat else {
            throw PatternError(message: "the repetition number is too large (LiveBridge allows \(Self.maximumRepeat))", position: position)
        }
        return n
    }

    private mutating func digits() -> String {
        var out = ""
        while let c = peek, c.isASCII, c.properties.numericType == .decimal { out.unicodeScalars.append(c); i += 1 }
        return out
    }

    // MARK: Atoms

    private mutating func atom() throws(PatternError) -> PatternNode? {
        let c = scalars[i]
        i += 1
        switch c {
        case ".": return .any(dotAll: flags.dotAll)
        case "^": return .assertion(.lineStart(multiline: flags.multiline))
        case "$": return .assertion(.lineEnd(multiline: flags.multiline))
        case "[": return .set(try set(openedAt: i - 1))
        case "(": return try group(openedAt: i - 1)
        case "\\": return try escape()
        case "*", "+", "?":
            throw PatternError(message: "nothing to repeat", position: i - 1)
        case "{":
            i -= 1
            if (try? quantifierLookahead()) == true { throw PatternError(message: "nothing to repeat", position: i) }
            i += 1
            return .scalar("{", folded: false)
        default: return literal(c)
        }
    }

    private mutating func quantifierLookahead() throws(PatternError) -> Bool {
        let save = i
        defer { i = save }
        return try quantifier() != nil
    }

    private func literal(_ c: Unicode.Scalar) -> PatternNode {
        flags.ignoreCase ? .scalar(PatternCase.fold(c), folded: true) : .scalar(c, folded: false)
    }

    private mutating func group(openedAt start: Int) throws(PatternError) -> PatternNode? {
        guard peek == "?" else {
            groupCount += 1
            let number = groupCount
            openGroups.insert(number)
            let inner = try alternation()
            try close(start)
            openGroups.remove(number)
            return .group(inner, capture: number)
        }
        i += 1
        guard let kind = next() else { throw PatternError(message: "unexpected end of pattern", position: i) }
        switch kind {
        case ":": let inner = try alternation(); try close(start); return .group(inner, capture: nil)
        case ">": let inner = try alternation(); try close(start); return .atomic(inner)
        case "=", "!":
            let inner = try alternation()
            try close(start)
            return .look(inner, ahead: true, negated: kind == "!")
        case "#":
            while let c = next() { if c == ")" { return nil } }
            throw PatternError(message: "missing ), unterminated comment", position: start)
        case "<" where peek == "=" || peek == "!":
            let negated = next() == "!"
            let inner = try alternation()
            try close(start)
            guard inner.fixedWidth != nil else { throw PatternError(message: "look-behind requires fixed-width pattern", position: nil) }
            return .look(inner, ahead: false, negated: negated)
        case "P":
            switch next() {
            case "<":
                let name = try groupName(until: ">")
                guard groupNames[name] == nil else { throw PatternError(message: "redefinition of group name '\(name)'", position: start + 4) }
                groupCount += 1
                let number = groupCount
                groupNames[name] = number
                openGroups.insert(number)
                let inner = try alternation()
                try close(start)
                openGroups.remove(number)
                return .group(inner, capture: number)
            case "=":
                let name = try groupName(until: ")")
                guard let number = groupNames[name] else { throw PatternError(message: "unknown group name '\(name)'", position: start + 4) }
                guard !openGroups.contains(number) else { throw PatternError(message: "cannot refer to an open group", position: start) }
                return .backreference(number, folded: flags.ignoreCase)
            default:
                throw PatternError(message: "unknown extension ?P\(i <= scalars.count ? String(scalars[i - 1]) : "")", position: start + 1)
            }
        case "(":
            throw PatternError(message: "conditional groups (?(…)…) are not supported by LiveBridge", position: start)
        default:
            i -= 1
            return try scopedFlags(openedAt: start)
        }
    }

    /// `(?i:…)`, `(?-i:…)`; `(?i)` past the start is Python's error.
    private mutating func scopedFlags(openedAt start: Int) throws(PatternError) -> PatternNode? {
        var on = Flags(), off = Flags()
        var turningOff = false
        while let c = next() {
            switch c {
            case "i": if turningOff { off.ignoreCase = true } else { on.ignoreCase = true }
            case "m": if turningOff { off.multiline = true } else { on.multiline = true }
            case "s": if turningOff { off.dotAll = true } else { on.dotAll = true }
            case "x": if turningOff { off.verbose = true } else { on.verbose = true }
            case "a": on.ascii = true
            case "u", "L": continue
            case "-": turningOff = true
            case ")":
                throw PatternError(message: "global flags not at the start of the expression", position: start)
            case ":":
                let saved = flags
                flags = apply(on, off, to: flags)
                defer { flags = saved }
                let inner = try alternation()
                try close(start)
                return .group(inner, capture: nil)
            default:
                throw PatternError(message: "unknown extension ?\(String(c))", position: start + 1)
            }
        }
        throw PatternError(message: "missing -, : or )", position: i)
    }

    /// Leading `(?aimsx)` groups set flags for the whole pattern.
    private mutating func readGlobalFlags() throws(PatternError) {
        while scalars.count >= i + 3, scalars[i] == "(", scalars[i + 1] == "?" {
            var j = i + 2
            var on = Flags()
            var any = false
            while j < scalars.count, "aiLmsux".unicodeScalars.contains(scalars[j]) {
                switch scalars[j] {
                case "i": on.ignoreCase = true
                case "m": on.multiline = true
                case "s": on.dotAll = true
                case "x": on.verbose = true
                case "a": on.ascii = true
                default: break
                }
                any = true
                j += 1
            }
            guard any, j < scalars.count, scalars[j] == ")" else { return }
            flags = apply(on, Flags(), to: flags)
            i = j + 1
        }
    }

    private func apply(_ on: Flags, _ off: Flags, to flags: Flags) -> Flags {
        var out = flags
        if on.ignoreCase { out.ignoreCase = true }
        if on.multiline { out.multiline = true }
        if on.dotAll { out.dotAll = true }
        if on.verbose { out.verbose = true }
        if on.ascii { out.ascii = true }
        if off.ignoreCase { out.ignoreCase = false }
        if off.multiline { out.multiline = false }
        if off.dotAll { out.dotAll = false }
        if off.verbose { out.verbose = false }
        return out
    }

    private mutating func groupName(until terminator: Unicode.Scalar) throws(PatternError) -> String {
        var name = ""
        while let c = next() {
            if c == terminator {
                guard let first = name.unicodeScalars.first, first.properties.isXIDStart || first == "_",
                      name.unicodeScalars.allSatisfy({ $0.properties.isXIDContinue }) else {
                    throw PatternError(message: "bad character in group name '\(name)'", position: i - name.unicodeScalars.count - 1)
                }
                return name
            }
            name.unicodeScalars.append(c)
        }
        throw PatternError(message: "missing \(String(terminator)), unterminated name", position: i)
    }

    private mutating func close(_ start: Int) throws(PatternError) {
        guard next() == ")" else { throw PatternError(message: "missing ), unterminated subpattern", position: start) }
    }

    // MARK: Escapes and sets

    private mutating func escape() throws(PatternError) -> PatternNode {
        let start = i - 1
        guard let c = next() else { throw PatternError(message: "bad escape (end of pattern)", position: start) }
        switch c {
        case "d", "D", "w", "W", "s", "S":
            var set = ScalarSet(ascii: flags.ascii)
            set.classes = [(Self.scalarClass(c), negated: c.properties.isUppercase)]
            return .set(set)
        case "b", "B": return .assertion(.wordBoundary(negated: c == "B", ascii: flags.ascii))
        case "A": return .assertion(.textStart)
        case "Z": return .assertion(.textEnd)
        case "1"..."9":
            var digits = String(c)
            if let d = peek, d.isASCII, d.properties.numericType == .decimal, !(digits == "0") {
                // Three octal digits are a character; otherwise up to two digits are a group.
                if i + 1 < scalars.count, Self.isOctal(c), Self.isOctal(d), Self.isOctal(scalars[i + 1]) {
                    let value = UInt32(String(c) + String(d) + String(scalars[i + 1]), radix: 8)!
                    i += 2
                    guard value <= 0o377 else { throw PatternError(message: "octal escape value \\\(String(c))\(String(d)) outside of range 0-0o377", position: start) }
                    return literal(Unicode.Scalar(value)!)
                }
                digits.unicodeScalars.append(d)
                i += 1
            }
            let number = Int(digits)!
            guard number <= groupCount, !openGroups.contains(number) else {
                throw PatternError(message: openGroups.contains(number) ? "cannot refer to an open group" : "invalid group reference \(number)", position: start + 1)
            }
            return .backreference(number, folded: flags.ignoreCase)
        default:
            return literal(try character(after: c, at: start, inSet: false))
        }
    }

    private static func isOctal(_ c: Unicode.Scalar) -> Bool { c.value >= 48 && c.value <= 55 }

    private static func scalarClass(_ c: Unicode.Scalar) -> ScalarClass {
        switch c { case "d", "D": .digit; case "w", "W": .word; default: .space }
    }

    /// The code point an escape stands for: `\n`, `\x41`, `\u00e9`, `\0`, `\.`…; Python refuses other ASCII letters.
    private mutating func character(after c: Unicode.Scalar, at start: Int, inSet: Bool) throws(PatternError) -> Unicode.Scalar {
        switch c {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "f": return "\u{0C}"
        case "v": return "\u{0B}"
        case "a": return "\u{07}"
        case "b" where inSet: return "\u{08}"
        case "0":
            var value: UInt32 = 0
            for _ in 0..<2 { guard let d = peek, Self.isOctal(d) else { break }; value = value * 8 + d.value - 48; i += 1 }
            return Unicode.Scalar(value)!
        case "x", "u", "U":
            let count = c == "x" ? 2 : c == "u" ? 4 : 8
            var hex = ""
            for _ in 0..<count {
                guard let d = peek, d.properties.isASCIIHexDigit else {
                    throw PatternError(message: "incomplete escape \\\(String(c))\(hex)", position: start)
                }
                hex.unicodeScalars.append(d)
                i += 1
            }
            guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                throw PatternError(message: "bad escape \\\(String(c))\(hex)", position: start)
            }
            return scalar
        default:
            if c.isASCII, c.properties.isAlphabetic || (inSet && c.properties.numericType == .decimal) {
                throw PatternError(message: "bad escape \\\(String(c))", position: start)
            }
            return c
        }
    }

    private mutating func set(openedAt start: Int) throws(PatternError) -> ScalarSet {
        var set = ScalarSet(folded: flags.ignoreCase, ascii: flags.ascii)
        if peek == "^" { set.negated = true; i += 1 }
        var first = true
        while true {
            guard let c = next() else { throw PatternError(message: "unterminated character set", position: start) }
            if c == "]", !first { return set }
            first = false
            var low: Unicode.Scalar
            if c == "\\" {
                guard let e = next() else { throw PatternError(message: "unterminated character set", position: start) }
                if "dDwWsS".unicodeScalars.contains(e) {
                    set.classes.append((Self.scalarClass(e), negated: e.properties.isUppercase))
                    continue
                }
                low = try character(after: e, at: i - 2, inSet: true)
            } else {
                low = c
            }
            // A range `a-z`; a `-` first, last or after a class is literal.
            if peek == "-", i + 1 < scalars.count, scalars[i + 1] != "]" {
                let rangeStart = i - 1
                i += 1
                var high = next()!
                if high == "\\" {
                    guard let e = next() else { throw PatternError(message: "unterminated character set", position: start) }
                    if "dDwWsS".unicodeScalars.contains(e) { throw PatternError(message: "bad character range \(String(low))-\\\(String(e))", position: rangeStart) }
                    high = try character(after: e, at: i - 2, inSet: true)
                }
                guard low.value <= high.value else {
                    throw PatternError(message: "bad character range \(String(low))-\(String(high))", position: rangeStart)
                }
                set.ranges.append(low.value...high.value)
            } else {
                set.ranges.append(low.value...low.value)
            }
        }
    }

    // MARK: Reading

    private var peek: Unicode.Scalar? { i < scalars.count ? scalars[i] : nil }

    private mutating func next() -> Unicode.Scalar? {
        guard i < scalars.count else { return nil }
        defer { i += 1 }
        return scalars[i]
    }

    /// VERBOSE: whitespace and `#…` comments between atoms are skipped. True when something was.
    private mutating func skipVerbose() -> Bool {
        guard let c = peek else { return false }
        if c.properties.isWhitespace { i += 1; return true }
        if c == "#" {
            while let d = next(), d != "\n" {}
            return true
        }
        return false
    }
}
