import Glibc
import FoundationEssentials

/// `round(x, precision, method)` as Home Assistant's filter computes it, total over every Double and precision.
enum Rounding {
    static func round(_ d: Double, precision: Int, method: String) -> Double {
        guard d.isFinite else { return d }
        // "half" ignores the precision, as Home Assistant's does.
        if method == "half" { return (d * 2).rounded(.toNearestOrEven) / 2 }
        // Beyond these a Double has no digits left to round (Python returns x), or every digit is rounded away (0).
        if precision > 330 { return d }
        if precision < -330 { return 0 * d }
        // Python's round: the exact binary value rounded to that many decimals, ties to even (2.675 → 2.67, as
        // 2.675 is 2.67499…); printf rounds the same exact value the same way.
        if method == "common", precision >= 0 {
            var buffer = [CChar](repeating: 0, count: 1_100)
            let written = withVaList([Int32(precision), d]) { vsnprintf(&buffer, buffer.count, "%.*f", $0) }
            if written > 0, written < buffer.count, let exact = Double(String(decoding: buffer.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)) { return exact }
        }
        let scale = Glibc.pow(10.0, Double(precision))
        let scaled = d * scale
        guard scaled.isFinite else { return d }
        let rounded: Double = switch method {
        case "ceil": scaled.rounded(.up)
        case "floor": scaled.rounded(.down)
        default: scaled.rounded(.toNearestOrEven)
        }
        return rounded / scale
    }
}
