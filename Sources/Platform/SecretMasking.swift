/// Secrets masked in text that came from outside: Home Assistant's own answers, a push service quoting a token back
/// in its error. One algorithm for every secret the daemon holds.
public enum SecretMasking {
    /// What stands in a text where a secret was.
    public static let redacted = "<token redacted>"
    /// How many characters of a secret's start are masked where they appear alone.
    static let minimumRun = 12

    /// `text` with every one of `secrets` masked wherever text from outside quoted it back: whole, or only its start
    /// where the quote was cut to a length (an upgrade answer is quoted to 80 characters; a JWT's signature is its end,
    /// the part cut off). Every run of at least twelve characters a secret begins with is masked, as far as it
    /// matches, also as `OutsideText.quoted` escapes it; runs that overlap or touch become one mask. A secret under 8
    /// characters is left alone: it would mask ordinary words, and no access token is that short. Each is found in the
    /// text as it came (two sharing a start, as two JWTs of one Home Assistant do, are both masked whole), the runs
    /// merged once. Linear in the text.
    public static func masking(_ secrets: [String], in text: String) -> String {
        let tokens = secrets.filter { $0.utf8.count >= 8 && text.utf8.count >= min(minimumRun, $0.utf8.count) }
        guard !tokens.isEmpty else { return text }
        let bytes = Array(text.utf8)
        var ranges: [Range<Int>] = []
        for token in tokens {
            ranges += runs(of: Array(token.utf8), in: bytes)
            let escaped = String(OutsideText.quoted(token, limit: Int.max).dropFirst().dropLast())
            if escaped != token { ranges += runs(of: Array(escaped.utf8), in: bytes) }
        }
        guard !ranges.isEmpty else { return text }
        var out: [UInt8] = []
        var position = 0
        for range in merged(ranges) {
            out += bytes[position..<range.lowerBound]
            out += redacted.utf8
            position = range.upperBound
        }
        out += bytes[position...]
        return String(decoding: out, as: UTF8.self)
    }

    /// Where in `text` a run of at least `minimumRun` bytes (or the whole pattern, if shorter) starts `pattern`, each
    /// as long as it matches: the Z-function of pattern, separator, text gives at every position the longest match
    /// with the pattern's start.
    static func runs(of pattern: [UInt8], in text: [UInt8]) -> [Range<Int>] {
        let joined = pattern + [0xFF] + text  // 0xFF never occurs in UTF-8: no match runs across it.
        let n = joined.count
        var z = [Int](repeating: 0, count: n)
        var left = 0, right = 0
        for i in 1..<n {
            if i < right { z[i] = min(right - i, z[i - left]) }
            while i + z[i] < n, joined[z[i]] == joined[i + z[i]] { z[i] += 1 }
            if i + z[i] > right { left = i; right = i + z[i] }
        }
        let shortest = min(minimumRun, pattern.count)
        var found: [Range<Int>] = []
        for i in (pattern.count + 1)..<n where z[i] >= shortest {
            let start = i - pattern.count - 1
            found.append(start..<start + z[i])
        }
        return found
    }

    /// Ranges sorted, those that overlap or touch joined.
    static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }
}
