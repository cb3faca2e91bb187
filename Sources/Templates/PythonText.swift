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

    /// `str.split(sep)`: the pieces between each occurrence of `separator` (not empty), left to right.
    static func split(_ s: String, separator: String) -> [String] {
        guard !separator.isEmpty else { return [s] }
        var parts: [String] = []
        var start = s.startIndex
        for range in occurrences(of: separator, in: s) {
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
}
