/// Text as Python sees it: a sequence of code points. Swift's String compares, counts and splits by grapheme
/// clusters ("\r\n", "e\u{301}", a flag are one Character each); Home Assistant's templates count, index, slice,
/// iterate, search and split code points, so these do too.
enum PythonText {
    static func length(_ s: String) -> Int { s.unicodeScalars.count }

    /// Each code point as a one-character string (`'ab' | list`, `for c in text`).
    static func characters(_ s: String) -> [String] { s.unicodeScalars.map { String($0) } }

    static func scalars(_ s: String) -> [Unicode.Scalar] { Array(s.unicodeScalars) }

    static func hasPrefix(_ s: String, _ prefix: String) -> Bool { s.unicodeScalars.starts(with: prefix.unicodeScalars) }

    static func hasSuffix(_ s: String, _ suffix: String) -> Bool {
        s.unicodeScalars.reversed().starts(with: suffix.unicodeScalars.reversed())
    }

    /// The first place `needle` starts in `haystack`, by code points.
    static func firstIndex(of needle: [Unicode.Scalar], in haystack: [Unicode.Scalar], from start: Int = 0) -> Int? {
        guard !needle.isEmpty else { return start <= haystack.count ? start : nil }
        guard needle.count <= haystack.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    static func contains(_ haystack: String, _ needle: String) -> Bool {
        firstIndex(of: scalars(needle), in: scalars(haystack)) != nil
    }

    /// `str.split(sep)`: the pieces between each occurrence of `separator` (not empty), left to right.
    static func split(_ s: String, separator: String) -> [String] {
        let text = scalars(s), sep = scalars(separator)
        guard !sep.isEmpty else { return [s] }
        var parts: [String] = []
        var start = 0
        while let found = firstIndex(of: sep, in: text, from: start) {
            parts.append(string(text[start..<found]))
            start = found + sep.count
        }
        parts.append(string(text[start...]))
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
