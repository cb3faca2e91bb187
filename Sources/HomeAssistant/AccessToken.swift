import FoundationEssentials
import Platform
/// A Home Assistant long-lived access token. It prints as a mask, so it cannot leak into logs or errors by accident.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read only where it is sent to Home Assistant.
    public let secret: String

    public init(_ secret: String) {
        self.secret = secret.trimmingWhitespace()
    }

    public var isEmpty: Bool { secret.isEmpty }
    public var description: String { Self.redacted }
    /// What stands in a text where a token was.
    static let redacted = "<token redacted>"
    public var debugDescription: String { description }

    /// How many characters of the token's start are masked where they appear alone.
    static let minimumRun = 12

    /// `text` with the token masked wherever Home Assistant's own text quoted it back: whole, or only its start where
    /// the quote was cut to a length (an upgrade answer is quoted to 80 characters; a JWT's signature is its end, the
    /// part cut off). Every run of at least twelve characters the token begins with is masked, as far as it matches,
    /// also as `OutsideText.quoted` escapes it; runs that overlap or touch become one mask. A token under 8
    /// characters is left alone: it would mask ordinary words, and no access token is that short. Linear in the text.
    public func masking(in text: String) -> String {
        Self.masking([self], in: text)
    }

    /// `text` with every one of `tokens` masked as `masking(in:)` masks one, each found in the text as it came (two
    /// tokens sharing a start, as two JWTs of one Home Assistant do, are both masked whole), the runs merged once.
    public static func masking(_ tokens: [AccessToken], in text: String) -> String {
        let tokens = tokens.filter { $0.secret.utf8.count >= 8 && text.utf8.count >= min(minimumRun, $0.secret.utf8.count) }
        guard !tokens.isEmpty else { return text }
        let bytes = Array(text.utf8)
        var ranges: [Range<Int>] = []
        for token in tokens {
            ranges += runs(of: Array(token.secret.utf8), in: bytes)
            let escaped = String(OutsideText.quoted(token.secret, limit: Int.max).dropFirst().dropLast())
            if escaped != token.secret { ranges += runs(of: Array(escaped.utf8), in: bytes) }
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

