public import JSON
import Platform

/// Draws a payload as the phone would: the Lock Screen card and the Dynamic Island's compact, minimal and expanded
/// presentations, as one self-contained, deterministic SVG (no fonts or images fetched; equal input, equal bytes).
public enum PreviewRenderer {
    static let font = "-apple-system, 'SF Pro Text', Helvetica, Arial, sans-serif"
    public static let width = 400.0
    public static let height = 450.0

    /// The SVG for `payload` (an Aivi content or body, or an Island Pulse body) with timers shown at `now`; an
    /// `ended` activity shows its final content with an "Ended" mark.
    public static func svg(_ payload: JSONValue, at now: Double, title: String? = nil, ended: Bool = false) -> String {
        let presentation = ActivityPresentation(payload: payload, at: now)
        var canvas = SVGCanvas()
        canvas.rect(x: 0, y: 0, width: width, height: height, fill: "#f2f2f7")
        caption(&canvas, "Lock Screen" + (title.map { " · \($0)" } ?? ""), y: 16, maxWidth: ended ? width - 90 : width - 24)
        if ended {
            // Final content stays readable; the mark says it is over (the phone dims nothing, it just stops updating).
            canvas.rect(x: width - 72, y: 4, width: 60, height: 16, radius: 8, fill: "#8e8e93")
            canvas.text("Ended", x: width - 42, y: 16, size: 11, color: "#ffffff", weight: 700, anchor: .middle)
        }
        canvas.group(x: 10, y: 24) { lockScreen(&$0, presentation) }
        caption(&canvas, "Dynamic Island · compact and minimal", y: 222)
        canvas.group(x: 10, y: 230) { compact(&$0, presentation) }
        canvas.group(x: 344, y: 230) { minimal(&$0, presentation) }
        caption(&canvas, "Dynamic Island · expanded", y: 290)
        canvas.group(x: 10, y: 298) { expanded(&$0, presentation) }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" "
            + "font-family=\"\(font)\" role=\"img\" aria-label=\"\(SVGCanvas.escape(presentation.source)) preview\">\n"
            + "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            + "<rect width=\"6\" height=\"6\" fill=\"#3a3a3c\"/><rect width=\"3\" height=\"6\" fill=\"#636366\"/></pattern></defs>\n"
            + canvas.body + "</svg>\n"
    }

    /// A share of a bar, from a payload: in 0…1, and 0 for NaN.
    static func fraction(_ value: Double) -> Double { value.isNaN ? 0 : min(max(value, 0), 1) }

    /// An HTML page holding the SVGs of several payloads.
    public static func html(_ items: [(title: String, svg: String)]) -> String {
        var page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>LiveBridge preview</title>\n"
        page += "<style>body{font-family:\(font);background:#f2f2f7;margin:24px}figure{display:inline-block;margin:8px}"
        page += "figcaption{font-size:13px;color:#3c3c43}</style></head><body>\n"
        for item in items {
            page += "<figure>\n" + item.svg + "<figcaption>\(SVGCanvas.escape(item.title))</figcaption></figure>\n"
        }
        return page + "</body></html>\n"
    }

    private static func caption(_ canvas: inout SVGCanvas, _ text: String, y: Double, maxWidth: Double = width - 24) {
        canvas.text(text, x: 12, y: y, size: 11, color: "#6c6c70", weight: 600, maxWidth: maxWidth)
    }

    // MARK: Lock Screen

    static func lockScreen(_ canvas: inout SVGCanvas, _ p: ActivityPresentation) {
        let w = 380.0
        canvas.rect(x: 0, y: 0, width: w, height: 180, radius: 24, fill: PreviewPalette.card)
        glyph(&canvas, p.icon, x: 16, y: 14, size: 26, color: p.accent)
        switch p.body {
        case .progress(let headerLeft, let headerRight, let bar, let footerLeft, let footerRight):
            let header = split(headerLeft?.text, headerRight?.text, width: w - 32, size: 20, weight: 600)
            label(&canvas, headerLeft, x: 16, y: 72, size: 20, weight: 600, maxWidth: header.left)
            label(&canvas, headerRight, x: w - 16, y: 72, size: 20, weight: 600, anchor: .end, maxWidth: header.right)
            if let bar { drawBar(&canvas, bar, x: 16, y: 90, width: w - 32, height: 12, labels: true) }
            let footer = split(footerLeft?.text, footerRight?.text, width: w - 32, size: 14, weight: 400)
            label(&canvas, footerLeft, x: 16, y: 160, size: 14, color: PreviewPalette.secondary, maxWidth: footer.left)
            label(&canvas, footerRight, x: w - 16, y: 160, size: 14, color: PreviewPalette.secondary, anchor: .end, maxWidth: footer.right)
        case .monitor(let left, let right, let primaryRight):
            column(&canvas, left, x: 16, width: w / 2 - 24, primary: !primaryRight)
            column(&canvas, right, x: w / 2 + 8, width: w / 2 - 24, primary: primaryRight)
        case .generic(let state, let bar, let remaining):
            let row = split(state?.text, remaining, width: w - 32, size: 20, weight: 600)
            label(&canvas, state, x: 16, y: 78, size: 20, weight: 600, maxWidth: row.left)
            if let remaining { canvas.text(remaining, x: w - 16, y: 78, size: 16, color: PreviewPalette.secondary, anchor: .end, maxWidth: row.right) }
            if let bar { drawBar(&canvas, bar, x: 16, y: 100, width: w - 32, height: 12, labels: false) }
        case .pulse(let layout, let title, let status, let message, let metric, let secondary, let bar, let a, let b, let subA, let subB):
            canvas.text(title, x: 50, y: 32, size: 13, weight: 600, maxCharacters: 28)
            canvas.circle(cx: w - 24, cy: 27, r: 5, fill: PreviewPalette.status(status))
            canvas.text(status, x: w - 34, y: 31, size: 11, color: PreviewPalette.secondary, anchor: .end)
            switch layout {
            case "sports":
                canvas.text(a ?? "–", x: 80, y: 100, size: 40, weight: 700, anchor: .middle, maxCharacters: 6)
                canvas.text(b ?? "–", x: w - 80, y: 100, size: 40, weight: 700, anchor: .middle, maxCharacters: 6)
                if let secondary { canvas.text(secondary, x: w / 2, y: 92, size: 14, color: p.accent, weight: 600, anchor: .middle, maxCharacters: 12) }
                if let subA { canvas.text(subA, x: 80, y: 126, size: 13, color: PreviewPalette.secondary, anchor: .middle, maxCharacters: 10) }
                if let subB { canvas.text(subB, x: w - 80, y: 126, size: 13, color: PreviewPalette.secondary, anchor: .middle, maxCharacters: 10) }
            case "score":
                canvas.text(metric ?? "", x: 16, y: 100, size: (metric?.count ?? 0) > 12 ? 28 : 40, weight: 700, maxCharacters: 16)
                if let secondary {
                    canvas.rect(x: w - 110, y: 46, width: 94, height: 22, radius: 11, fill: PreviewPalette.track)
                    canvas.text(secondary, x: w - 63, y: 61, size: 12, color: p.accent, weight: 600, anchor: .middle, maxCharacters: 10)
                }
                if let message { canvas.text(message, x: 16, y: 140, size: 15, color: PreviewPalette.secondary, maxCharacters: 45) }
            case "progress":
                if let metric { canvas.text(metric, x: w - 16, y: 76, size: 18, weight: 600, anchor: .end, maxCharacters: 15) }
                if let bar { drawBar(&canvas, bar, x: 16, y: 92, width: w - 32, height: 10, labels: false) }
                if let message { canvas.text(message, x: 16, y: 140, size: 15, color: PreviewPalette.secondary, maxCharacters: 48) }
            default:
                if let message { wrapped(&canvas, message, x: 16, y: 84, size: 17, lineLength: 38, lines: 2) }
            }
        }
    }

    // MARK: Dynamic Island

    static func compact(_ canvas: inout SVGCanvas, _ p: ActivityPresentation) {
        canvas.rect(x: 60, y: 0, width: 250, height: 37, radius: 18.5, fill: PreviewPalette.island)
        glyph(&canvas, p.icon, x: 72, y: 7, size: 23, color: p.accent)
        if let compact = p.compact {
            canvas.text(compact.text, x: 296, y: 24, size: 14, color: compact.color == PreviewPalette.text ? p.accent : compact.color,
                        weight: 600, anchor: .end, maxCharacters: 9)
        }
    }

    static func minimal(_ canvas: inout SVGCanvas, _ p: ActivityPresentation) {
        canvas.circle(cx: 18.5, cy: 18.5, r: 18.5, fill: PreviewPalette.island)
        glyph(&canvas, p.icon, x: 7, y: 7, size: 23, color: p.accent)
    }

    static func expanded(_ canvas: inout SVGCanvas, _ p: ActivityPresentation) {
        let w = 380.0
        canvas.rect(x: 0, y: 0, width: w, height: 140, radius: 44, fill: PreviewPalette.island)
        // Leading: the icon and the main figure; trailing: the secondary figure; center: the title; bottom: bar or columns.
        glyph(&canvas, p.icon, x: 22, y: 16, size: 30, color: p.accent)
        switch p.body {
        case .progress(let headerLeft, let headerRight, let bar, _, _):
            let row = split(headerLeft?.text, (headerRight ?? p.compact)?.text, width: w - 24 - 62, size: 16, weight: 600)
            label(&canvas, headerLeft, x: 62, y: 37, size: 16, weight: 600, maxWidth: row.left)
            label(&canvas, headerRight ?? p.compact, x: w - 24, y: 37, size: 16, weight: 600, anchor: .end, maxWidth: row.right)
            if let bar { drawBar(&canvas, bar, x: 24, y: 84, width: w - 48, height: 10, labels: false) }
        case .monitor(let left, let right, _):
            let values = split(left?.value.text, right?.value.text, width: w - 24 - 62, size: 16, weight: 600)
            if let left { canvas.text(left.value.text, x: 62, y: 37, size: 16, color: left.value.color, weight: 600, maxWidth: values.left) }
            if let right { canvas.text(right.value.text, x: w - 24, y: 37, size: 16, color: right.value.color, weight: 600, anchor: .end, maxWidth: values.right) }
            let footers = split(left?.footer, right?.footer, width: w - 48, size: 13, weight: 400)
            if let footer = left?.footer { canvas.text(footer, x: 24, y: 96, size: 13, color: PreviewPalette.secondary, maxWidth: footers.left) }
            if let footer = right?.footer { canvas.text(footer, x: w - 24, y: 96, size: 13, color: PreviewPalette.secondary, anchor: .end, maxWidth: footers.right) }
        case .generic(let state, let bar, let remaining):
            let row = split(state?.text, remaining, width: w - 24 - 62, size: 16, weight: 600)
            label(&canvas, state, x: 62, y: 37, size: 16, weight: 600, maxWidth: row.left)
            if let remaining { canvas.text(remaining, x: w - 24, y: 37, size: 14, color: PreviewPalette.secondary, anchor: .end, maxWidth: row.right) }
            if let bar { drawBar(&canvas, bar, x: 24, y: 84, width: w - 48, height: 10, labels: false) }
        case .pulse(let layout, let title, _, let message, let metric, let secondary, let bar, let a, let b, _, _):
            canvas.text(title, x: w / 2, y: 30, size: 13, color: PreviewPalette.secondary, anchor: .middle, maxCharacters: 24)
            if layout == "sports" {
                canvas.text("\(a ?? "–")  \(secondary ?? "")  \(b ?? "–")", x: w / 2, y: 76, size: 26, weight: 700, anchor: .middle, maxCharacters: 24)
            } else {
                if let metric { canvas.text(metric, x: w - 24, y: 37, size: 16, weight: 600, anchor: .end, maxCharacters: 15) }
                if let bar { drawBar(&canvas, bar, x: 24, y: 70, width: w - 48, height: 10, labels: false) }
                if let message { canvas.text(message, x: 24, y: 112, size: 14, color: PreviewPalette.secondary, maxCharacters: 46) }
            }
        }
    }

    /// Whether the preview has its own drawing of the SF Symbol `name` (else it shows the symbol's initial).
    public static func drawsSymbol(_ name: String) -> Bool { SymbolGlyphs.canDraw(name) }

    // MARK: Pieces

    /// The activity's symbol on its accent disc: our own outline of the SF Symbols the examples use
    /// (`SymbolGlyphs`); for any other, the disc with the symbol's initial. The symbol's name is never printed: the
    /// phone does not print it.
    static func glyph(_ canvas: inout SVGCanvas, _ name: String?, x: Double, y: Double, size: Double, color: String) {
        canvas.circle(cx: x + size / 2, cy: y + size / 2, r: size / 2, fill: color)
        if let name, let drawing = SymbolGlyphs.shapes(for: name) {
            let inner = size * 0.62
            canvas.raw(SymbolGlyphs.markup(drawing, x: x + (size - inner) / 2, y: y + (size - inner) / 2, size: inner, color: "#ffffff"))
            return
        }
        let initial = name.flatMap { $0.first }.map { String($0).uppercased() } ?? "•"
        canvas.text(initial, x: x + size / 2, y: y + size * 0.68, size: size * 0.5, color: "#ffffff", weight: 700, anchor: .middle)
    }

    static func label(_ canvas: inout SVGCanvas, _ label: ActivityPresentation.Label?, x: Double, y: Double, size: Double,
                      color: String? = nil, weight: Int = 400, anchor: SVGCanvas.Anchor = .start, maxWidth: Double) {
        guard let label else { return }
        let shown = color != nil && label.color == PreviewPalette.text ? color! : label.color
        canvas.text(label.text, x: x, y: y, size: size, color: shown, weight: weight, anchor: anchor, maxWidth: maxWidth)
    }

    /// How a row of `width` points is shared by a left and a right text: the right keeps its width up to 45 % of the
    /// row, the left has the rest less a gap; either alone may take the whole row. Both are cut to fit, never overlap.
    static func split(_ left: String?, _ right: String?, width: Double, size: Double, weight: Int) -> (left: Double, right: Double) {
        let gap = 12.0
        guard let right, !right.isEmpty else { return (width, 0) }
        guard let left, !left.isEmpty else { return (0, width) }
        let rightWidth = min(TextWidth.of(right, size: size, weight: weight), width * 0.45)
        return (width - rightWidth - gap, rightWidth)
    }

    static func column(_ canvas: inout SVGCanvas, _ column: ActivityPresentation.Column?, x: Double, width: Double, primary: Bool) {
        guard let column else { return }
        if let header = column.header { canvas.text(header, x: x, y: 66, size: 13, color: PreviewPalette.secondary, maxWidth: width) }
        canvas.text(column.value.text, x: x, y: 104, size: primary ? 30 : 24, color: column.value.color, weight: 700, maxWidth: width)
        if let footer = column.footer { canvas.text(footer, x: x, y: 140, size: 13, color: PreviewPalette.secondary, maxWidth: width) }
    }

    static func wrapped(_ canvas: inout SVGCanvas, _ text: String, x: Double, y: Double, size: Double, lineLength: Int, lines: Int) {
        var rows: [String] = [""]
        for word in text.split(separator: " ") {
            if rows[rows.count - 1].count + word.count + 1 > lineLength, !rows[rows.count - 1].isEmpty { rows.append("") }
            rows[rows.count - 1] += (rows[rows.count - 1].isEmpty ? "" : " ") + word
        }
        for (index, row) in rows.prefix(lines).enumerated() {
            let last = index == lines - 1 && rows.count > lines
            canvas.text(last ? row + "…" : row, x: x, y: y + Double(index) * size * 1.3, size: size, maxCharacters: lineLength + 1)
        }
    }

    /// A simple bar, or segments: split (each segment fills in turn) or layered (tracks under one fill).
    static func drawBar(_ canvas: inout SVGCanvas, _ bar: ActivityPresentation.Bar, x: Double, y: Double, width: Double, height: Double, labels: Bool) {
        let radius = height / 2
        guard !bar.segments.isEmpty else {
            canvas.rect(x: x, y: y, width: width, height: height, radius: radius, fill: PreviewPalette.track)
            canvas.rect(x: x, y: y, width: width * fraction(bar.value), height: height, radius: radius, fill: bar.color)
            return
        }
        let gap = bar.layered ? 0.0 : 3.0
        let usable = width - gap * Double(bar.segments.count - 1)
        var offset = x
        var remaining = bar.value
        for segment in bar.segments {
            let segmentWidth = usable * segment.value
            canvas.rect(x: offset, y: y, width: segmentWidth, height: height, radius: bar.layered ? 0 : radius,
                        fill: segment.hatched ? "url(#hatch)" : segment.track)
            let filled = min(max(remaining, 0), segment.value)
            if filled > 0 {
                canvas.rect(x: offset, y: y, width: usable * filled, height: height, radius: bar.layered ? 0 : radius, fill: segment.fill)
            }
            remaining -= segment.value
            if labels, let label = segment.label {
                canvas.text(label, x: offset, y: y + height + 16, size: 11, color: PreviewPalette.secondary, maxCharacters: Int(saturating: segmentWidth / 6.5))
            }
            offset += segmentWidth + gap
        }
    }
}
