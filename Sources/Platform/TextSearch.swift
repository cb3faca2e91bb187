extension String {
    /// Where `target` first occurs, matched on UTF-8 bytes, so on whole Unicode scalars (as Python and Jinja compare
    /// text). Unlike `firstRange(of:)` it needs none of the String Processing library, which the daemon's start-up would
    /// otherwise page in for a few markers (`{{`, `://`); nil for an empty target.
    public func firstRange(ofText target: String) -> Range<String.Index>? {
        guard let offsets = UTF8Search(target)?.first(in: Array(utf8), from: 0) else { return nil }
        return utf8.index(startIndex, offsetBy: offsets.lowerBound)..<utf8.index(startIndex, offsetBy: offsets.upperBound)
    }

    /// Whether `target` occurs, matched as `firstRange(ofText:)` matches.
    public func containsText(_ target: String) -> Bool {
        UTF8Search(target)?.first(in: Array(utf8), from: 0) != nil
    }
}

/// A search for one non-empty run of UTF-8 bytes.
struct UTF8Search {
    let needle: [UInt8]

    init?(_ target: String) {
        guard !target.isEmpty else { return nil }
        needle = Array(target.utf8)
    }

    /// The offsets of the first match in `haystack` at or after `start`.
    func first(in haystack: [UInt8], from start: Int) -> Range<Int>? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        let lead = needle[0]
        for position in start...(haystack.count - needle.count)
        where haystack[position] == lead && haystack[position..<(position + needle.count)].elementsEqual(needle) {
            return position..<(position + needle.count)
        }
        return nil
    }
}
