/// Text as Python sees it: a sequence of code points. Swift's String compares, counts and splits by grapheme
/// clusters ("\r\n", "e\u{301}", a flag are one Character each); Home Assistant's templates count, index, slice,
/// iterate, search and split code points, so these do too.
enum PythonText {
    static func length(_ s: String) -> Int { s.unicodeScalars.count }

    /// Each code point as a one-character string (`'ab' | list`, `for c in text`).
    static func characters(_ s: String) -> [String] { s.unicodeScalars.map { String($0) } }

    static func scalars(_ s: String) -> [Unicode.Scalar] { Array(s.unicodeScalars) }

    // Searching: on UTF-8 bytes. A valid UTF-8 needle matches only where a code point starts and ends, so byte search
    // is code point search, without building arrays (`'run' in states(…)` is in many a rule's every evaluation).

    static func hasPrefix(_ s: String, _ prefix: String) -> Bool { s.utf8.starts(with: prefix.utf8) }

    static func hasSuffix(_ s: String, _ suffix: String) -> Bool { s.utf8.reversed().starts(with: suffix.utf8.reversed()) }

    /// Where `needle` occurs in `text`, left to right and not overlapping, as Python's `split`/`count` take them.
    static func occurrences(of needle: String, in text: String) -> [Range<String.Index>] {
        guard !needle.isEmpty else { return [] }
        var found: [Range<String.Index>] = []
        var rest = text.utf8[...]
        while let range = rest.firstRange(of: needle.utf8) {
            found.append(range)
            rest = rest[range.upperBound...]
        }
        return found
    }

    static func contains(_ haystack: String, _ needle: String) -> Bool { haystack.utf8.firstRange(of: needle.utf8) != nil }

    /// `str.find`: the code point where `needle` first starts, nil when nowhere.
    static func firstOffset(of needle: String, in text: String) -> Int? {
        guard let range = text.utf8.firstRange(of: needle.utf8) else { return nil }
        // Code points before it: the bytes that start one (not 10xxxxxx).
        return text.utf8[..<range.lowerBound].reduce(0) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }

    /// `str.split(sep, maxsplit)`: the pieces between each occurrence of `separator` (not empty), left to right, at
    /// most `limit` splits (all when negative).
    static func split(_ s: String, separator: String, limit: Int = -1) -> [String] {
        guard !separator.isEmpty else { return [s] }
        var parts: [String] = []
        var start = s.startIndex
        let found = occurrences(of: separator, in: s)
        for range in limit < 0 ? found[...] : found.prefix(limit) {
            parts.append(String(decoding: s.utf8[start..<range.lowerBound], as: UTF8.self))
            start = range.upperBound
        }
        parts.append(String(decoding: s.utf8[start...], as: UTF8.self))
        return parts
    }

    /// `str.strip(chars)`, `lstrip`, `rstrip`: the code points in `chars` (whitespace when nil) taken off the ends.
    static func strip(_ s: String, _ chars: String?, leading: Bool, trailing: Bool) -> String {
        let set = chars.map { Set($0.unicodeScalars) }
        func strips(_ c: Unicode.Scalar) -> Bool { set.map { $0.contains(c) } ?? c.properties.isWhitespace }
        var text = scalars(s)[...]
        if leading { while let c = text.first, strips(c) { text.removeFirst() } }
        if trailing { while let c = text.last, strips(c) { text.removeLast() } }
        return string(text)
    }

    /// Python's ordering of text: code point by code point (Swift's < orders by canonical equivalence).
    static func compare(_ a: String, _ b: String) -> Int {
        // UTF-8's byte order is its code points' order.
        var x = a.utf8.makeIterator(), y = b.utf8.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
            }
        }
    }

    static func string<C: Collection>(_ scalars: C) -> String where C.Element == Unicode.Scalar {
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars)
        return String(out)
    }

    /// The last place `needle` starts in `text` (overlaps allowed, as `str.rfind`), nil when nowhere: the first place
    /// the reversed needle starts in the reversed text, found by the same search as `firstRange` (a byte-by-byte
    /// search from the right took seconds on 60,000 bytes).
    static func lastRange(of needle: String, in text: String) -> Range<String.Index>? {
        lastRanges(of: needle, in: text, limit: 1).first
    }

    /// Up to `limit` places `needle` occurs in `text` from the right, not overlapping (as `rsplit` takes them).
    static func lastRanges(of needle: String, in text: String, limit: Int) -> [Range<String.Index>] {
        let reversedText = Array(text.utf8.reversed()), reversedNeedle = Array(needle.utf8.reversed())
        let utf8 = text.utf8, count = reversedText.count
        var found: [Range<String.Index>] = []
        var from = 0
        while limit < 0 || found.count < limit, from <= count, let range = reversedText[from...].firstRange(of: reversedNeedle) {
            let lower = utf8.index(utf8.startIndex, offsetBy: count - range.upperBound)
            found.append(lower..<utf8.index(lower, offsetBy: reversedNeedle.count))
            guard !reversedNeedle.isEmpty else { break }
            from = range.upperBound
        }
        return found
    }

    /// `str.rfind`: the code point where `needle` last starts.
    static func lastOffset(of needle: String, in text: String) -> Int? {
        guard let range = lastRange(of: needle, in: text) else { return nil }
        return text.utf8[..<range.lowerBound].reduce(0) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
    }

    /// Python's whitespace (`str.isspace`, `split()` without a separator): Unicode's White_Space and the
    /// separators U+001C–U+001F.
    static func isSpace(_ c: Unicode.Scalar) -> Bool { c.properties.isWhitespace || (0x1C...0x1F).contains(c.value) }

    /// `str.rsplit(sep, maxsplit)`: split from the right, at most `limit` times (all when negative); without a
    /// separator at runs of whitespace, none empty.
    static func rsplit(_ s: String, separator: String?, limit: Int) -> [String] {
        var parts: [String] = []
        if let separator {
            var end = s.utf8.endIndex
            for range in lastRanges(of: separator, in: s, limit: limit) {
                parts.append(String(decoding: s.utf8[range.upperBound..<end], as: UTF8.self))
                end = range.lowerBound
            }
            parts.append(String(decoding: s.utf8[..<end], as: UTF8.self))
            return parts.reversed()
        }
        var text = scalars(s)[...]
        while true {
            while let c = text.last, isSpace(c) { text.removeLast() }
            guard !text.isEmpty else { break }
            if limit >= 0, parts.count == limit { parts.append(string(text)); break }
            var start = text.endIndex
            while start > text.startIndex, !isSpace(text[start - 1]) { start -= 1 }
            parts.append(string(text[start...]))
            text = text[..<start]
        }
        return parts.reversed()
    }

    /// `str.split(None, maxsplit)`: the runs of text between Python's whitespace, left to right; once `limit` splits
    /// are made (when not negative), the rest whole, its leading whitespace gone.
    static func splitAtWhitespace(_ s: String, limit: Int = -1) -> [String] {
        var parts: [String] = []
        var text = scalars(s)[...]
        while true {
            while let c = text.first, isSpace(c) { text.removeFirst() }
            guard !text.isEmpty else { break }
            if limit >= 0, parts.count == limit { parts.append(string(text)); break }
            var end = text.startIndex
            while end < text.endIndex, !isSpace(text[end]) { end += 1 }
            parts.append(string(text[..<end]))
            text = text[end...]
        }
        return parts
    }

    /// The code point range `[start:end]` of `str.find(sub, start, end)` and its kin, as CPython adjusts it: negative
    /// counts from the end; nil for a start past the end or past `end` by more than the needle allows.
    static func searchBounds(_ s: String, start: Int?, end: Int?, needle: String) -> (lower: String.Index, upper: String.Index, offset: Int)? {
        let length = length(s)
        var lower = start ?? 0, upper = end ?? length
        if upper > length { upper = length } else if upper < 0 { upper = max(0, upper + length) }
        if lower < 0 { lower = max(0, lower + length) }
        guard upper - lower >= PythonText.length(needle) else { return nil }
        let scalars = s.unicodeScalars
        let from = scalars.index(scalars.startIndex, offsetBy: lower), to = scalars.index(scalars.startIndex, offsetBy: upper)
        return (from, to, lower)
    }

    /// Python's `str.lower()`: Unicode's full lower case, with capital sigma final (ς) after a cased letter and not
    /// before one (case-ignorable marks skipped), as CPython's `handle_capital_sigma`.
    static func lower(_ s: String) -> String {
        guard s.unicodeScalars.contains("\u{3A3}") else { return s.lowercased() }
        let text = scalars(s)
        var out = ""
        for (i, c) in text.enumerated() {
            if c == "\u{3A3}" { out.unicodeScalars.append(finalSigma(text, at: i) ? "\u{3C2}" : "\u{3C3}") } else { out += c.properties.lowercaseMapping }
        }
        return out
    }

    private static func finalSigma(_ text: [Unicode.Scalar], at i: Int) -> Bool {
        var j = i - 1
        while j >= 0, text[j].properties.isCaseIgnorable { j -= 1 }
        guard j >= 0, text[j].properties.isCased else { return false }
        j = i + 1
        while j < text.count, text[j].properties.isCaseIgnorable { j += 1 }
        return j == text.count || !text[j].properties.isCased
    }

    /// The text with any script's decimal digits as ASCII digits and Python's whitespace taken off its ends, for
    /// Python's `int()` and `float()`; nil when it holds another character outside ASCII.
    static func asciiDigits(_ s: String) -> String? {
        // int() and float() strip Unicode's White_Space, not the separators U+001C–U+001F that split() also takes.
        var text = scalars(s)[...]
        while let c = text.first, c.properties.isWhitespace { text.removeFirst() }
        while let c = text.last, c.properties.isWhitespace { text.removeLast() }
        var out = ""
        for c in text {
            if c.isASCII { out.unicodeScalars.append(c); continue }
            guard c.properties.numericType == .decimal, let digit = c.properties.numericValue, let ascii = Unicode.Scalar(48 + Int(digit)) else { return nil }
            out.unicodeScalars.append(ascii)
        }
        return out
    }

    /// `str.splitlines(keepends)`: at \n, \r, \r\n, \v, \f, U+001C–U+001E, U+0085, U+2028 and U+2029.
    static func splitlines(_ s: String, keepEnds: Bool) -> [String] {
        let text = scalars(s)
        var lines: [String] = []
        var start = 0, i = 0
        while i < text.count {
            let c = text[i].value
            guard [0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029].contains(c) else { i += 1; continue }
            let end = c == 0x0D && i + 1 < text.count && text[i + 1].value == 0x0A ? i + 2 : i + 1
            lines.append(string(text[start..<(keepEnds ? end : i)]))
            start = end
            i = end
        }
        if start < text.count { lines.append(string(text[start...])) }
        return lines
    }

    /// `str.isalpha()`, `isdigit`, `isnumeric`, `isdecimal`, `isalnum`, `isspace`, `islower`, `isupper`, by Python's
    /// character classes.
    static func test(_ name: String, _ s: String) -> Bool {
        guard !s.isEmpty else { return false }
        func alpha(_ c: Unicode.Scalar) -> Bool {
            switch c.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: true
            default: false
            }
        }
        func decimal(_ c: Unicode.Scalar) -> Bool { c.properties.numericType == .decimal }
        func digit(_ c: Unicode.Scalar) -> Bool { decimal(c) || c.properties.numericType == .digit }
        func numeric(_ c: Unicode.Scalar) -> Bool { c.properties.numericType != nil }
        func cased(_ c: Unicode.Scalar) -> Bool {
            c.properties.isLowercase || c.properties.isUppercase || c.properties.generalCategory == .titlecaseLetter
        }
        let all = s.unicodeScalars
        switch name {
        case "isalpha": return all.allSatisfy(alpha)
        case "isdigit": return all.allSatisfy(digit)
        case "isnumeric": return all.allSatisfy(numeric)
        case "isdecimal": return all.allSatisfy(decimal)
        case "isalnum": return all.allSatisfy { alpha($0) || numeric($0) }
        case "isspace": return all.allSatisfy(isSpace)
        case "islower": return all.contains(where: cased) && !all.contains { $0.properties.isUppercase || $0.properties.generalCategory == .titlecaseLetter }
        case "isupper": return all.contains(where: cased) && !all.contains { $0.properties.isLowercase || $0.properties.generalCategory == .titlecaseLetter }
        default: return false
        }
    }

    /// `str.swapcase()`: upper case to lower and lower to upper, code point by code point (ß becomes SS, a final
    /// capital sigma ς).
    static func swapcase(_ s: String) -> String {
        var out = ""
        let text = scalars(s)
        for (i, c) in text.enumerated() {
            if c == "\u{3A3}" { out.unicodeScalars.append(finalSigma(text, at: i) ? "\u{3C2}" : "\u{3C3}") }
            else if c.properties.isUppercase { out += c.properties.lowercaseMapping }
            else if c.properties.isLowercase { out += c.properties.uppercaseMapping }
            else { out.unicodeScalars.append(c) }
        }
        return out
    }
}
