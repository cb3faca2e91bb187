import Platform

/// Turning what entities hold (strings, mostly) into numbers, times and durations, as Home Assistant's helpers do.
enum Conversions {
    /// Home Assistant's `float` and `int`: a number, else the fallback, else an error (never a silent 0).
    static func number(_ value: TemplateValue, integer: Bool, fallback: TemplateValue?) throws(EvaluationError) -> TemplateValue {
        if integer, case .int = value { return value }
        // Python's int() reads a whole number's digits exactly; through a float, 2^63 - 1 would become 2^63.
        // Another script's digits only when the text has a byte outside ASCII: "unavailable" costs no scan and copy.
        if integer, case .string(let s) = value, let exact = Int(s) ?? Int(s.trimmingSpaces())
            ?? (s.utf8.contains { $0 >= 0x80 } ? PythonText.asciiDigits(s).flatMap({ Int($0) }) : nil) {
            return .int(exact)
        }
        if let d = float(value) {
            guard integer else { return .double(d) }
            // int(nan) and int(inf) fail in Python; so does any number beyond 64 bits here (Python would grow the int).
            if let i = Int(truncating: d) { return .int(i) }
        }
        if let fallback { return fallback }
        throw EvaluationError("\(integer ? "int" : "float") got \(value.typeName) \(value.repr), which is not a number, and no default")
    }

    /// Python's `float(text)`: surrounding whitespace, a sign, digits with single underscores between them, a
    /// fraction, an exponent, or inf/infinity/nan in any case; nothing else (Swift's Double also reads hexadecimal
    /// "0x1p3", which Python refuses).
    static func pythonFloat(_ raw: String) -> Double? {
        // The common cases at once, without allocating: what Double reads (bar its hexadecimal forms) Python reads the
        // same, and a word ("running", "unavailable") is no number.
        func isHex(_ b: UInt8) -> Bool { b == UInt8(ascii: "x") || b == UInt8(ascii: "X") }
        if let d = Double(raw) { return raw.utf8.contains(where: isHex) ? nil : d }
        // Python reads any script's decimal digits ("١٢", "１２") and strips any whitespace around them.
        if raw.utf8.contains(where: { $0 >= 0x80 }) { return PythonText.asciiDigits(raw).flatMap(pythonFloat) }
        var text = Substring(raw)
        if text.first?.isWhitespace == true || text.last?.isWhitespace == true { text = Substring(raw.trimmingSpaces()) }
        guard let lead = text.utf8.first(where: { $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") }),
              (lead >= 48 && lead <= 57) || lead == UInt8(ascii: ".") || "iInN".utf8.contains(lead),
              text.utf8.count <= 4_096, !text.utf8.contains(where: isHex) else { return nil }
        guard text.utf8.contains(UInt8(ascii: "_")) else { return Double(String(text)) }
        // Underscores only between two digits, then gone.
        let bytes = Array(text.utf8)
        var cleaned: [UInt8] = []
        cleaned.reserveCapacity(bytes.count)
        func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
        for (index, b) in bytes.enumerated() {
            if b == UInt8(ascii: "_") {
                guard index > 0, index + 1 < bytes.count, isDigit(bytes[index - 1]), isDigit(bytes[index + 1]) else { return nil }
            } else {
                cleaned.append(b)
            }
        }
        return Double(String(decoding: cleaned, as: UTF8.self))
    }

    static func float(_ value: TemplateValue) -> Double? {
        switch value {
        case .int, .double, .bool: return value.number
        case .string(let s): return pythonFloat(s)
        default: return nil
        }
    }

    /// Seconds since 1970 from a datetime, an ISO 8601 string or a number; nil for what Python's datetime cannot hold
    /// (NaN, infinities, years outside 1–9999), as Home Assistant's conversions fail there.
    /// A datetime or text without a zone is read in `zone`, as Python's `timestamp()` reads a naive datetime.
    static func epoch(_ value: TemplateValue, zone: LocalTimeZone) -> Double? {
        switch value {
        case .datetime(let t, let offset): return TemplateValue.instant(t, offset, zone: zone)
        case .int, .double: return value.number.flatMap(Timestamp.checked)
        case .string(let s):
            if let (t, offset) = Timestamp.parseISO8601(s.trimmingSpaces()) {
                return TemplateValue.instant(t, offset ?? TemplateValue.naive, zone: zone)
            }
            return Double(s).flatMap(Timestamp.checked)
        default: return nil
        }
    }

    /// Seconds from `H:MM:SS`, `MM:SS`, `D days, H:MM:SS`, ISO 8601 `PT1H30M`, or a number of seconds; nil for what
    /// Python's timedelta cannot hold (NaN, beyond ±999,999,999 days).
    static func duration(_ value: TemplateValue) -> Double? {
        anyDuration(value).flatMap { TemplateValue.timedeltaRange.contains($0) ? $0 : nil }
    }

    private static func anyDuration(_ value: TemplateValue) -> Double? {
        switch value {
        case .timedelta(let s): return s
        case .int, .double: return value.number
        case .string(let raw):
            let s = raw.trimmingSpaces()
            if s.hasPrefix("P") || s.hasPrefix("-P") { return isoDuration(s) }
            return clockDuration(s)
        default: return nil
        }
    }

    private static func isoDuration(_ s: String) -> Double? {
        var negative = false
        var chars = Substring(s)
        if chars.hasPrefix("-") { negative = true; chars = chars.dropFirst() }
        guard chars.hasPrefix("P") else { return nil }
        chars = chars.dropFirst()
        var total = 0.0
        var number = ""
        var inTime = false
        for c in chars {
            if c == "T" { inTime = true; continue }
            if c.isNumber || c == "." { number.append(c); continue }
            guard let n = Double(number) else { return nil }
            number = ""
            switch (c, inTime) {
            case ("D", false): total += n * 86_400
            case ("W", false): total += n * 604_800
            case ("H", true): total += n * 3600
            case ("M", true): total += n * 60
            case ("S", true): total += n
            default: return nil
            }
        }
        guard number.isEmpty else { return nil }
        return negative ? -total : total
    }

    /// Django's standard duration, as Home Assistant's `parse_duration` reads it: `[D day[s], ][-][[H:]M:]S[.ffffff]`
    /// (so `01:02` is a minute and two seconds, `-1:00:00` minus an hour).
    private nonisolated(unsafe) static let standardDuration = try! Regex(
        #"^(?:(?<days>-?\d+) (?:days?, )?)?(?<sign>-?)(?:(?<hours>\d+):(?=\d+:\d+))?(?:(?<minutes>\d+):)?(?<seconds>\d+)(?:[\.,](?<micro>\d{1,6})\d{0,6})?$"#)

    private static func clockDuration(_ text: String) -> Double? {
        guard let match = try? standardDuration.wholeMatch(in: text) else { return nil }
        func number(_ name: String) -> Double { match.output[name]?.substring.flatMap { Double($0) } ?? 0 }
        let micro = match.output["micro"]?.substring.map { Double($0 + String(repeating: "0", count: 6 - $0.count)) ?? 0 } ?? 0
        let sign: Double = match.output["sign"]?.substring == "-" ? -1 : 1
        let clock = number("hours") * 3600 + number("minutes") * 60 + number("seconds") + micro / 1_000_000
        return number("days") * 86_400 + sign * clock
    }
}
