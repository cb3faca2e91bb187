import JSON
@testable import FakePushServices

/// Values at and past each limit a published schema gives a field, with whether the document allows each: what the
/// contract walks send.
enum ContractWalk {
    static func cases(_ field: ContractField) -> [(value: JSONValue, allowed: Bool, what: String)] {
        var out: [(JSONValue, Bool, String)] = []
        let text = field.types.contains("string")
        if text, let max = field.maxLength {
            out.append((.string(String(repeating: "x", count: max)), true, "\(max) characters"))
            out.append((.string(String(repeating: "x", count: max + 1)), false, "\(max + 1) characters"))
            // Lengths are code points: a decomposed é is two, one letter on screen.
            if max >= 2 {
                out.append((.string(String(repeating: "e\u{301}", count: max / 2)), true, "\(max / 2) decomposed é (\(max / 2 * 2) code points)"))
                out.append((.string(String(repeating: "e\u{301}", count: max / 2 + 1)), false, "\(max / 2 + 1) decomposed é (\((max / 2 + 1) * 2) code points)"))
            }
        }
        if text, let min = field.minLength, min > 0 {
            out.append((.string(String(repeating: "x", count: min)), true, "\(min) characters"))
            out.append((.string(String(repeating: "x", count: min - 1)), false, "\(min - 1) characters"))
        }
        let integer = field.types.contains("integer") && !field.types.contains("number")
        func number(_ x: Double) -> JSONValue { integer ? .int(Int(x)) : .double(x) }
        let step = integer ? 1.0 : 0.5
        if let max = field.maximum {
            out.append((number(max), true, "\(max)"))
            out.append((number(max + step), false, "past \(max)"))
        }
        if let min = field.minimum {
            out.append((number(min), true, "\(min)"))
            out.append((number(min - step), false, "below \(min)"))
        }
        if let min = field.exclusiveMinimum {
            out.append((number(min + step), true, "just above \(min)"))
            out.append((number(min), false, "\(min) (exclusive)"))
        }
        return out
    }
}
