/// A Python `re` pattern as written, parsed into a tree with its flags baked into the nodes they change
/// (`(?i:…)` folds only what it encloses).
indirect enum PatternNode {
    case empty
    /// One code point; `folded` compares lower-cased (IGNORECASE).
    case scalar(Unicode.Scalar, folded: Bool)
    /// `.`: any code point but a newline, or any at all under DOTALL.
    case any(dotAll: Bool)
    case set(ScalarSet)
    case assertion(PatternAssertion)
    /// `(…)` with its number, or `(?:…)` with none.
    case group(PatternNode, capture: Int?)
    case sequence([PatternNode])
    case alternation([PatternNode])
    case repetition(PatternNode, min: Int, max: Int?, greedy: Bool, possessive: Bool)
    case backreference(Int, folded: Bool)
    /// `(?=…)`, `(?!…)`, `(?<=…)`, `(?<!…)`.
    case look(PatternNode, ahead: Bool, negated: Bool)
    /// `(?>…)`: once matched, never backtracked into.
    case atomic(PatternNode)

    /// How many code points the node always matches, nil when it varies (look-behind needs a fixed width).
    var fixedWidth: Int? {
        switch self {
        case .empty, .assertion, .look: return 0
        case .scalar, .any, .set: return 1
        case .group(let inner, _), .atomic(let inner): return inner.fixedWidth
        case .sequence(let items):
            var total = 0
            for item in items {
                guard let width = item.fixedWidth else { return nil }
                total += width
            }
            return total
        case .alternation(let branches):
            let widths = branches.map(\.fixedWidth)
            guard let first = widths.first ?? 0, widths.allSatisfy({ $0 == first }) else { return nil }
            return first
        case .repetition(let inner, let min, let max, _, _):
            guard max == min, let width = inner.fixedWidth else { return nil }
            let (total, overflow) = width.multipliedReportingOverflow(by: min)
            return overflow ? nil : total
        case .backreference: return nil
        }
    }
}

/// Zero-width assertions.
enum PatternAssertion {
    /// `^`: the start, or after any newline under MULTILINE.
    case lineStart(multiline: Bool)
    /// `$`: the end or before a final newline, or before any newline under MULTILINE.
    case lineEnd(multiline: Bool)
    /// `\A`
    case textStart
    /// `\Z`
    case textEnd
    /// `\b`, `\B`
    case wordBoundary(negated: Bool, ascii: Bool)
}

/// The character classes of `\d`, `\w`, `\s` as Python's `re` has them for text: Unicode unless ASCII.
enum ScalarClass {
    case digit, word, space

    func contains(_ c: Unicode.Scalar, ascii: Bool) -> Bool {
        if c.isASCII || ascii {
            guard c.isASCII else { return false }
            let v = c.value
            switch self {
            case .digit: return v >= 48 && v <= 57
            case .word: return (v >= 48 && v <= 57) || (v >= 65 && v <= 90) || (v >= 97 && v <= 122) || v == 95
            case .space: return v == 32 || (v >= 9 && v <= 13) || (!ascii && v >= 28 && v <= 31)
            }
        }
        let properties = c.properties
        switch self {
        case .digit: return properties.generalCategory == .decimalNumber
        case .word: return properties.isAlphabetic || properties.numericType != nil
        case .space: return properties.isWhitespace
        }
    }
}

/// `[…]`: code points, ranges and classes, maybe negated; under IGNORECASE a code point's other case counts too.
struct ScalarSet {
    var ranges: [ClosedRange<UInt32>] = []
    var classes: [(ScalarClass, negated: Bool)] = []
    var negated = false
    var folded = false
    var ascii = false

    func contains(_ c: Unicode.Scalar) -> Bool {
        var hit = containsExactly(c)
        if !hit, folded {
            let lower = PatternCase.fold(c)
            hit = (lower != c && containsExactly(lower)) || PatternCase.upper(c).map(containsExactly) == true
        }
        return hit != negated
    }

    private func containsExactly(_ c: Unicode.Scalar) -> Bool {
        for range in ranges where range.contains(c.value) { return true }
        for (kind, negated) in classes where kind.contains(c, ascii: ascii) != negated { return true }
        return false
    }
}

/// Simple case mapping, as Python's IGNORECASE compares code points.
enum PatternCase {
    static func fold(_ c: Unicode.Scalar) -> Unicode.Scalar {
        if c.isASCII {
            return (c.value >= 65 && c.value <= 90) ? Unicode.Scalar(c.value + 32)! : c
        }
        let lower = c.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : c
    }

    static func upper(_ c: Unicode.Scalar) -> Unicode.Scalar? {
        if c.isASCII { return (c.value >= 97 && c.value <= 122) ? Unicode.Scalar(c.value - 32)! : nil }
        let upper = c.properties.uppercaseMapping.unicodeScalars
        return upper.count == 1 && upper.first! != c ? upper.first! : nil
    }
}

/// Why a pattern cannot be compiled, in Python's words, with the position in code points.
struct PatternError: Error, CustomStringConvertible {
    let message: String
    let position: Int?
    var description: String { position.map { "\(message) at position \($0)" } ?? message }
}
