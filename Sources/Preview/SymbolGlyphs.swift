/// Outline drawings, our own, of the SF Symbols the bundled examples, demo and blueprints use (SF Symbols are
/// Apple's and not ours to ship): simple shapes on a 24-point grid, drawn in white on the activity's accent disc. A
/// symbol not drawn here gets the neutral disc with its initial.
enum SymbolGlyphs {
    enum Shape {
        case path(String, filled: Bool = false)
        case circle(Double, Double, Double, filled: Bool = false)
        case rect(Double, Double, Double, Double, radius: Double = 0)
        case line(Double, Double, Double, Double)
    }

    private static let appliance: [Shape] = [.rect(4, 2, 16, 20, radius: 2), .line(4, 7, 20, 7), .circle(7, 4.5, 0.6, filled: true)]
    private static let bolt: [Shape] = [.path("M13 2 L5 13 H11 L10 22 L19 10 H13 Z")]
    private static let car: [Shape] = [.path("M3 17 V12 L6 7 H18 L21 12 V17 Z"), .circle(7.5, 17, 1.8, filled: true), .circle(16.5, 17, 1.8, filled: true)]
    private static let vacuum: [Shape] = [.circle(12, 12, 9), .circle(12, 12, 3), .line(6, 8, 18, 8)]
    private static let thermometer: [Shape] = [.path("M10 4 A2 2 0 0 1 14 4 V14 A4 4 0 1 1 10 14 Z"), .line(12, 9, 12, 16)]
    private static let check: [Shape] = [.path("M7 12.5 L10.5 16 L17 8.5")]

    static let shapes: [String: [Shape]] = [
        "washer": appliance + [.circle(12, 14, 5), .circle(12, 14, 2)],
        "dryer": appliance + [.circle(12, 14, 5), .path("M9.5 14 Q10.75 12.5 12 14 T14.5 14")],
        "dishwasher": appliance + [.line(8, 11, 8, 18), .line(12, 11, 12, 18), .line(16, 11, 16, 18)],
        "timer": [.circle(12, 13.5, 8), .line(12, 13.5, 12, 9), .line(10, 2, 14, 2), .line(12, 2, 12, 5.5)],
        "clock": [.circle(12, 12, 9), .path("M12 7 V12 L15.5 14")],
        "pause.circle": [.circle(12, 12, 9), .line(10, 8.5, 10, 15.5), .line(14, 8.5, 14, 15.5)],
        "play.circle": [.circle(12, 12, 9), .path("M10 8 L16 12 L10 16 Z")],
        "bolt": bolt,
        "bolt.fill": [.path("M13 2 L5 13 H11 L10 22 L19 10 H13 Z", filled: true)],
        "bolt.car": car + [.path("M12.5 8.5 L10.5 12 H13.5 L11.5 15.5")],
        "car": car,
        "battery.100.bolt": [.rect(2, 7, 18, 10, radius: 2), .rect(20, 10, 2, 4), .path("M12 8.5 L9.5 12 H12.5 L10 15.5")],
        "robotic.vacuum": vacuum,
        "robotic.vacuum.and.ellipsis": vacuum + [.circle(17, 20.5, 0.9, filled: true), .circle(20, 20.5, 0.9, filled: true), .circle(23, 20.5, 0.9, filled: true)],
        "checkmark": [.path("M5 12.5 L10 17.5 L19 7")],
        "checkmark.circle": [.circle(12, 12, 9)] + check,
        "checkmark.circle.fill": [.circle(12, 12, 9)] + check,
        "exclamationmark.triangle": [.path("M12 3 L22 20 H2 Z"), .line(12, 9, 12, 14), .circle(12, 17, 0.8, filled: true)],
        "server.rack": [.rect(4, 4, 16, 6, radius: 1), .rect(4, 14, 16, 6, radius: 1), .circle(7.5, 7, 0.8, filled: true), .circle(7.5, 17, 0.8, filled: true)],
        "thermometer.medium": thermometer,
        "thermometer.sun": thermometer + [.circle(19, 6, 2.5), .line(19, 1.5, 19, 2.5), .line(23, 6, 22, 6), .line(15, 6, 16, 6)],
        "printer.filled.and.paper": [.rect(3, 9, 18, 8, radius: 1.5), .rect(7, 3, 10, 6), .rect(7, 14, 10, 7)],
        "house": [.path("M3 11 L12 3 L21 11 V21 H3 Z"), .rect(10, 14, 4, 7)],
        "lightbulb": [.path("M12 3 A6 6 0 0 1 16 13.5 V16 H8 V13.5 A6 6 0 0 1 12 3 Z"), .line(9, 18.5, 15, 18.5), .line(10, 21, 14, 21)],
        "leaf": [.path("M5 19 C5 9 11 4 20 4 C20 13 15 19 5 19 Z"), .line(5, 19, 12, 12)],
        "flame": [.path("M12 2 C14 6 18 8 18 14 A6 6 0 0 1 6 14 C6 10 9 8 12 2 Z"), .path("M12 20 A2.5 2.5 0 0 1 9.5 17.5 C9.5 16 11 15 12 13 C13 15 14.5 16 14.5 17.5 A2.5 2.5 0 0 1 12 20 Z")],
        "drop": [.path("M12 3 C15 8 18 11 18 15 A6 6 0 0 1 6 15 C6 11 9 8 12 3 Z")],
    ]

    /// Whether the preview has its own drawing of the SF Symbol `name` (else it shows the symbol's initial).
    static func canDraw(_ name: String) -> Bool { shapes(for: name) != nil }

    /// The drawing for `name`: the symbol itself, or without a trailing `.fill` variant it lacks.
    static func shapes(for name: String) -> [Shape]? {
        if let exact = shapes[name] { return exact }
        if name.hasSuffix(".fill") { return shapes[String(name.dropLast(".fill".count))] }
        return nil
    }

    /// SVG markup for the drawing in a box of `size` at (x, y), in `color`.
    static func markup(_ drawing: [Shape], x: Double, y: Double, size: Double, color: String) -> String {
        let scale = size / 24
        func n(_ v: Double) -> String { SVGCanvas.number(v) }
        var out = "<g transform=\"translate(\(n(x)) \(n(y))) scale(\(format3(scale)))\" fill=\"none\" stroke=\"\(SVGCanvas.escape(color))\" "
            + "stroke-width=\"2\" stroke-linecap=\"round\" stroke-linejoin=\"round\">"
        for shape in drawing {
            switch shape {
            case .path(let d, let filled):
                out += "<path d=\"\(d)\"\(filled ? " fill=\"\(color)\"" : "")/>"
            case .circle(let cx, let cy, let r, let filled):
                out += "<circle cx=\"\(n(cx))\" cy=\"\(n(cy))\" r=\"\(n(r))\"\(filled ? " fill=\"\(color)\"" : "")/>"
            case .rect(let rx, let ry, let w, let h, let radius):
                out += "<rect x=\"\(n(rx))\" y=\"\(n(ry))\" width=\"\(n(w))\" height=\"\(n(h))\"\(radius > 0 ? " rx=\"\(n(radius))\"" : "")/>"
            case .line(let x1, let y1, let x2, let y2):
                out += "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\"/>"
            }
        }
        return out + "</g>"
    }

    /// A scale with three decimals, the same text for the same value.
    private static func format3(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        var fraction = String(String(thousandths % 1000 + 1000).dropFirst())
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? String(thousandths / 1000) : "\(thousandths / 1000).\(fraction)"
    }
}
