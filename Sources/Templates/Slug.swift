/// Home Assistant's `slugify` (python-slugify, as entity ids are made): accents and ligatures of the Latin
/// alphabets written as plain letters (`Wäsche` → `wasche`, `ß` → `ss`), lower case, every run of anything else one
/// separator, none at the ends; text with nothing left is `unknown`.
///
/// python-slugify transliterates other scripts too (`日本` → `ri_ben`); here characters outside the Latin ranges
/// separate words, so such text slugifies differently (documented in the README).
public enum Slug {
    public static func make(_ value: TemplateValue, separator: String) throws(EvaluationError) -> String {
        // Home Assistant 2026 slugifies str(value): a number as its digits, None as "none".
        let text = value.text
        guard !text.isEmpty else { return "" }
        var plain = ""
        for scalar in decodingReferences(text).unicodeScalars {
            if scalar == "'" { plain.append("-") }
            else if scalar.isASCII { plain.unicodeScalars.append(scalar) }
            else if let letters = latin[scalar.value] { plain += letters }
            else if !(0x300...0x36F).contains(scalar.value) { plain.append("-") }
            // Combining marks are dropped (the letter they sit on stays); anything else separates words.
        }
        plain = plain.lowercased()
        // Thousands separators go: "1,000" → "1000".
        let chars = Array(plain)
        var slug = ""
        var pendingSeparator = false
        for (i, c) in chars.enumerated() {
            if c == ",", i > 0, i + 1 < chars.count, chars[i - 1].isASCII, chars[i - 1].isNumber, chars[i + 1].isASCII, chars[i + 1].isNumber { continue }
            if c.isASCII && (c.isLetter || c.isNumber) {
                if pendingSeparator && !slug.isEmpty {
                    try EvaluationLimits.checkLength(slug.utf8.count + separator.utf8.count, "slugify's separators")
                    slug += separator
                }
                pendingSeparator = false
                slug.append(c)
            } else {
                pendingSeparator = true
            }
        }
        return slug.isEmpty ? "unknown" : slug
    }

    /// HTML character references python-slugify decodes first: `&amp;`, `&#38;`, `&#x26;` and the common named ones.
    private static func decodingReferences(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let named: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " "]
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(12).firstIndex(of: ";") {
                let name = after[..<semicolon]
                var decoded: String?
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    decoded = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if name.hasPrefix("#") {
                    decoded = UInt32(name.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                } else {
                    decoded = named[String(name)]
                }
                if let decoded {
                    out += decoded
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            out += "&"
            rest = after
        }
        return out + rest
    }

    /// Latin-1 Supplement and Latin Extended-A as unidecode writes them in ASCII.
    private static let latin: [UInt32: String] = {
        var table: [UInt32: String] = [:]
        // U+00C0…U+00FF, with the two-letter ones split out.
        let pieces = ["A", "A", "A", "A", "A", "A", "AE", "C", "E", "E", "E", "E", "I", "I", "I", "I", "D", "N", "O", "O", "O", "O", "O",
                      "x", "O", "U", "U", "U", "U", "Y", "Th", "ss", "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e",
                      "i", "i", "i", "i", "d", "n", "o", "o", "o", "o", "o", "/", "o", "u", "u", "u", "u", "y", "th", "y"]
        for (i, piece) in pieces.enumerated() { table[0xC0 + UInt32(i)] = piece }
        // U+0100…U+017F: mostly a capital and its small letter in turn.
        let extended = ["A", "a", "A", "a", "A", "a", "C", "c", "C", "c", "C", "c", "C", "c", "D", "d", "D", "d", "E", "e", "E", "e",
                        "E", "e", "E", "e", "E", "e", "G", "g", "G", "g", "G", "g", "G", "g", "H", "h", "H", "h", "I", "i", "I", "i",
                        "I", "i", "I", "i", "I", "i", "IJ", "ij", "J", "j", "K", "k", "k", "L", "l", "L", "l", "L", "l", "L*", "l*",
                        "L", "l", "N", "n", "N", "n", "N", "n", "n", "ng", "NG", "O", "o", "O", "o", "O", "o", "OE", "oe", "R", "r",
                        "R", "r", "R", "r", "S", "s", "S", "s", "S", "s", "S", "s", "T", "t", "T", "t", "T", "t", "U", "u", "U", "u",
                        "U", "u", "U", "u", "U", "u", "U", "u", "W", "w", "Y", "y", "Y", "Z", "z", "Z", "z", "Z", "z", "s"]
        for (i, piece) in extended.enumerated() { table[0x100 + UInt32(i)] = piece }
        table[0xA0] = " "
        return table
    }()
}
