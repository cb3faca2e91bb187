extension String {
    /// Every occurrence of `target` replaced by `replacement`, left to right; an empty target changes nothing
    /// (as Foundation's `replacingOccurrences(of:with:)`, which FoundationEssentials lacks).
    public func replacingAll(_ target: String, with replacement: String) -> String {
        target.isEmpty ? self : replacing(target, with: replacement)
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
