/// Text that came from outside (a service's answer, an entity's state, an event's field) on its way into a log line
/// or a status report: cut to a bound, so a 100 MB value is not a 100 MB line, and with the characters that would
/// break a line or fool a terminal named.
public enum OutsideText {
    /// The most characters of one value kept (a marker says how much more there was).
    public static let limit = 1_000

    /// `text` when it has at most `limit` Unicode scalars, else its first `limit` and `…[N more bytes cut]`.
    /// Counted in scalars, not characters, so a huge value costs no grapheme breaking.
    public static func bounded(_ text: String, limit: Int = limit) -> String {
        // No more bytes than the limit: no more scalars either, nothing to count.
        if text.utf8.count <= limit { return text }
        let scalars = text.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex), end != scalars.endIndex else {
            return text
        }
        let kept = String(scalars[..<end])
        return kept + "…[\(text.utf8.count - kept.utf8.count) more bytes cut]"
    }

    /// Controls (C0, DEL, C1), the line and paragraph separators, bidirectional overrides and isolates, and the byte
    /// order mark: shown as escapes, never written as they are.
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: return true
        default: return false
        }
    }

    /// `\u` and four hex digits (or `\u{…}` beyond the basic plane) for a scalar written as an escape.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return scalar.value > 0xFFFF ? "\\u{\(hex)}" : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// A value shown in an error or a warning: quoted, cut at `limit`, with `"`, `\\` and unsafe scalars escaped, so a
    /// hostile file or event cannot break the message that names it.
    public static func quoted(_ text: String, limit: Int = 80) -> String {
        var out = "\""
        for scalar in bounded(text, limit: limit).unicodeScalars {
            if isUnsafe(scalar) || scalar == "\"" || scalar == "\\" { out += escape(scalar) } else { out.unicodeScalars.append(scalar) }
        }
        return out + "\""
    }
}
