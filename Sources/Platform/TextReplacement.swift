extension String {
    /// Every occurrence of `target` replaced by `replacement`, left to right, matched as `firstRange(ofText:)`
    /// matches; an empty target changes nothing (as Foundation's `replacingOccurrences(of:with:)`, which
    /// FoundationEssentials lacks, and as Jinja's `replace`).
    public func replacingAll(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8)
        guard let search = UTF8Search(target), var found = search.first(in: bytes, from: 0) else { return self }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var copied = 0
        while true {
            result += bytes[copied..<found.lowerBound]
            result += replacement.utf8
            copied = found.upperBound
            guard let next = search.first(in: bytes, from: copied) else { break }
            found = next
        }
        result += bytes[copied...]
        return String(decoding: result, as: UTF8.self)
    }

    /// Each word's first letter upper case and the rest lower case, words split at anything not a letter or digit
    /// (Jinja's `title`, Foundation's `capitalized`).
    public var titleCased: String {
        var result = ""
        var atWordStart = true
        for character in self {
            let isWordCharacter = character.isLetter || character.isNumber || character == "'"
            result += atWordStart ? character.uppercased() : character.lowercased()
            atWordStart = !isWordCharacter
        }
        return result
    }
}
