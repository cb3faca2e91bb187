/// How wide text is drawn, estimated from the San Francisco face's proportions: enough to keep a long label inside
/// its column (truncated with "…") instead of running into the next one. Deterministic: equal text, equal width.
enum TextWidth {
    /// Advance of one character, in ems.
    static func advance(_ character: Character) -> Double {
        switch character {
        case "i", "l", "j", "!", "|", ".", ",", ":", ";", "'", "’", "I", "f", "t", "r": return 0.3
        case " ": return 0.28
        case "m", "w", "M", "W", "@", "%", "…": return 0.86
        case "0"..."9": return 0.6
        case "A"..."Z": return 0.66
        default: return character.isASCII ? 0.54 : 0.62
        }
    }

    static func of(_ text: String, size: Double, weight: Int) -> Double {
        let bold = weight >= 600 ? 1.06 : 1.0
        return text.reduce(0) { $0 + advance($1) } * size * bold
    }

    /// `text`, or as much of it as fits `width` followed by "…".
    static func fitting(_ text: String, width: Double, size: Double, weight: Int) -> String {
        guard of(text, size: size, weight: weight) > width else { return text }
        var shown = Array(text)
        while !shown.isEmpty, of(String(shown) + "…", size: size, weight: weight) > width { shown.removeLast() }
        while shown.last == " " { shown.removeLast() }
        return String(shown) + "…"
    }
}
