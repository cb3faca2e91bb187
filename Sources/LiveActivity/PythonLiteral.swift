import Platform

/// The numbers Home Assistant's native-type rendering reads from a template's text (Python's `literal_eval`):
/// `42`, `-7.5`, `1e3`, `.5`, `1_000`, `0x1F`, `0o17`, `0b101`. A typed field (a progress value, `progress_max`)
/// takes a rendered `"0.5"` as Home Assistant's own templates would give it: the number 0.5.
enum PythonLiteral {
    static func number(_ raw: String) -> Double? {
        var text = Substring(raw.trimmingSpaces())
        var sign = 1.0
        if let first = text.first, first == "-" || first == "+" {
            sign = first == "-" ? -1 : 1
            text = text.dropFirst()
        }
        guard let first = text.first, first.isASCII, first.isNumber || first == "." else { return nil }
        // Underscores only between digits, as Python allows them.
        if text.contains("_") {
            let chars = Array(text)
            for (i, c) in chars.enumerated() where c == "_" {
                guard i > 0, i + 1 < chars.count, chars[i - 1].isHexDigit, chars[i + 1].isHexDigit else { return nil }
            }
            text = Substring(text.filter { $0 != "_" })
        }
        let lowered = text.lowercased()
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where lowered.hasPrefix(prefix) {
            return Int(lowered.dropFirst(2), radix: radix).map { sign * Double($0) }
        }
        // Python refuses leading zeros in integers ("007"); Home Assistant then keeps the text.
        if lowered.count > 1, lowered.hasPrefix("0"), lowered.allSatisfy(\.isNumber) { return nil }
        guard lowered.allSatisfy({ $0.isNumber || $0 == "." || $0 == "e" || $0 == "-" || $0 == "+" }),
              let value = Double(lowered), value.isFinite else { return nil }
        return sign * value
    }
}
