/// Builds SVG text: shapes and text with escaping and fixed number formatting, so equal input gives equal bytes.
/// Every text and every attribute value is escaped, whatever its source: a colour or a label from a payload cannot
/// end its attribute and add markup to the page that shows the drawing.
struct SVGCanvas {
    private(set) var body = ""

    /// A coordinate or size, one decimal; clamped to ±1,000,000 (and NaN to 0) before it becomes an integer, so no
    /// payload number can trap the conversion.
    static func number(_ value: Double) -> String {
        let clamped = value.isNaN ? 0 : min(max(value, -1_000_000), 1_000_000)
        let rounded = (clamped * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, radius: Double = 0, fill: String, extra: String = "") {
        body += "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(max(0, width)))\" height=\"\(Self.number(height))\""
        if radius > 0 { body += " rx=\"\(Self.number(radius))\"" }
        body += " fill=\"\(Self.escape(fill))\"\(extra.isEmpty ? "" : " " + extra)/>\n"
    }

    mutating func circle(cx: Double, cy: Double, r: Double, fill: String) {
        body += "<circle cx=\"\(Self.number(cx))\" cy=\"\(Self.number(cy))\" r=\"\(Self.number(r))\" fill=\"\(Self.escape(fill))\"/>\n"
    }

    enum Anchor: String { case start, middle, end }

    /// `maxWidth`: the text is cut (with "…") to fit that many points; `maxCharacters` to that many characters.
    mutating func text(_ text: String, x: Double, y: Double, size: Double, color: String = "#ffffff", weight: Int = 400,
                       anchor: Anchor = .start, maxCharacters: Int? = nil, maxWidth: Double? = nil) {
        var shown = text
        if let maxCharacters, shown.count > maxCharacters { shown = String(shown.prefix(max(1, maxCharacters - 1))) + "…" }
        if let maxWidth { shown = TextWidth.fitting(shown, width: maxWidth, size: size, weight: weight) }
        body += "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\" fill=\"\(Self.escape(color))\""
        if weight != 400 { body += " font-weight=\"\(weight)\"" }
        if anchor != .start { body += " text-anchor=\"\(anchor.rawValue)\"" }
        body += ">\(Self.escape(shown))</text>\n"
    }

    mutating func raw(_ markup: String) { body += markup + "\n" }

    mutating func group(x: Double, y: Double, _ content: (inout SVGCanvas) -> Void) {
        var inner = SVGCanvas()
        content(&inner)
        body += "<g transform=\"translate(\(Self.number(x)) \(Self.number(y)))\">\n" + inner.body + "</g>\n"
    }
}
