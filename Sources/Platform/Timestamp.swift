/// Epoch seconds ⇄ ISO 8601, the way Home Assistant writes them (`2026-11-22T12:00:00.123456+00:00`).
public enum Timestamp {
    /// The instants Python's `datetime` can hold, years 1 to 9999, as seconds since 1970. Home Assistant's templates
    /// fail (`ValueError: year is out of range`) outside it; so do ours, and nothing outside it is formatted.
    public static let representable: ClosedRange<Double> = -62_135_596_800 ... 253_402_300_799

    /// `epoch` if it is an instant Python's `datetime` can hold (finite, years 1–9999), else nil.
    @inlinable
    public static func checked(_ epoch: Double) -> Double? {
        representable.contains(epoch) ? epoch : nil
    }

    /// UTC, microseconds shown only when there are any, as Python's isoformat does.
    /// `separator: " "` gives Python's str() of a datetime instead of its isoformat(); `offset` (seconds east of UTC)
    /// shows the wall time of that zone, with its offset.
    public static func iso8601(_ epoch: Double, offset: Int = 0, separator: String = "T") -> String {
        let c = components(epoch + Double(offset))
        var out: [UInt8] = []
        out.reserveCapacity(32)
        appendDate(c, to: &out)
        out.append(contentsOf: separator.utf8)
        appendTime(c, to: &out)
        if c.microsecond != 0 {
            out.append(UInt8(ascii: "."))
            appendDigits(c.microsecond, width: 6, to: &out)
        }
        out.append(offset < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
        let minutes = abs(offset) / 60
        appendDigits(minutes / 60, width: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(minutes % 60, width: 2, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// UTC with milliseconds and `Z` (`2026-11-22T12:00:00.123Z`), as log lines carry it: fixed width, no ICU.
    public static func logTime(_ epoch: Double) -> String {
        var bytes: [UInt8] = []
        appendLogTime(epoch, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `logTime` written onto `bytes`: a log line is built as bytes, without a string per field.
    public static func appendLogTime(_ epoch: Double, to bytes: inout [UInt8]) {
        let c = components((epoch * 1000).rounded(.down) / 1000)
        appendDate(c, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendTime(c, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendDigits(c.microsecond / 1000, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `YYYY-MM-DD`.
    private static func appendDate(_ c: Components, to bytes: inout [UInt8]) {
        appendDigits(c.year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(c.month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(c.day, width: 2, to: &bytes)
    }

    /// `HH:MM:SS`.
    private static func appendTime(_ c: Components, to bytes: inout [UInt8]) {
        appendDigits(c.hour, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(c.minute, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(c.second, width: 2, to: &bytes)
    }

    /// `value` in decimal, zero-padded to `width` digits (all its digits when it has more; a timestamp's fields are
    /// never negative, and a negative value is written as 0).
    private static func appendDigits(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        let value = max(value, 0)
        var divisor = 1, count = 1
        while count < width || value / divisor >= 10 {
            divisor *= 10
            count += 1
        }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS[.ffffff]]` with `Z`, `±HH:MM` or no offset (taken as UTC); nil outside years 1–9999.
    public static func epoch(fromISO8601 text: String) -> Double? { parseISO8601(text)?.epoch }

    /// The same, with the offset the text gave (nil when it gave none: the epoch is then the wall time read as UTC).
    public static func parseISO8601(_ text: String) -> (epoch: Double, offset: Int?)? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<width {
                let b = bytes[index]
                guard b >= 48 && b <= 57 else { return nil }
                value = value * 10 + Int64(b - 48)
                index += 1
            }
            return value
        }
        func expect(_ char: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == char else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
              (1...12).contains(month), (1...31).contains(day) else { return nil }
        // A day the month has (Python refuses 2026-02-30).
        guard day <= daysIn(month: Int(month), year: Int(year)) else { return nil }
        // A date alone is its midnight, without a zone (Python's fromisoformat, as Home Assistant parses it).
        if index == bytes.count {
            return (Double(daysSinceEpoch(year: year, month: month, day: day)) * 86_400, nil)
        }
        guard index < bytes.count, bytes[index] == 84 || bytes[index] == 116 || bytes[index] == 32 else { return nil }
        index += 1
        guard let hour = number(2), expect(58), let minute = number(2), hour < 24, minute < 60 else { return nil }
        var second: Int64 = 0
        var fraction = 0.0
        if expect(58) {
            guard let s = number(2), s < 61 else { return nil }
            second = s
            if expect(46) {
                var scale = 0.1
                let start = index
                while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
                    fraction += Double(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
                guard index > start else { return nil }
            }
        }
        var offset: Int64 = 0
        var zoned = false
        if index < bytes.count {
            zoned = true
            if bytes[index] == 90 || bytes[index] == 122 {
                index += 1
            } else if bytes[index] == 43 || bytes[index] == 45 {
                let sign: Int64 = bytes[index] == 45 ? -1 : 1
                index += 1
                guard let h = number(2) else { return nil }
                _ = expect(58)
                guard let m = number(2) else { return nil }
                offset = sign * (h * 3600 + m * 60)
            } else {
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        guard let epoch = checked(Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction) else { return nil }
        return (epoch, zoned ? Int(offset) : nil)
    }

    /// Calendar fields of a UTC instant; weekday 0 is Monday, as Python counts.
    public struct Components: Equatable, Sendable {
        public let year, month, day, hour, minute, second, weekday, dayOfYear: Int
        public let microsecond: Int
    }

    /// Total: an instant outside `representable` (or NaN) is clamped into it, so formatting never traps. Callers that
    /// must refuse such instants check with `checked(_:)` first.
    public static func components(_ unclamped: Double) -> Components {
        let epoch = unclamped.isNaN ? 0 : min(max(unclamped, representable.lowerBound), representable.upperBound)
        var micros = Int64((epoch * 1_000_000).rounded())
        var seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        micros -= seconds * 1_000_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        seconds -= days * 86_400
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let weekday = Int(((days % 7) + 7 + 3) % 7)  // 1970-01-01 was a Thursday (3)
        let dayOfYear = Int(days - daysSinceEpoch(year: year, month: 1, day: 1)) + 1
        return Components(year: Int(year), month: Int(month), day: Int(day), hour: Int(seconds / 3600),
                          minute: Int(seconds % 3600 / 60), second: Int(seconds % 60), weekday: weekday,
                          dayOfYear: dayOfYear, microsecond: Int(micros))
    }

    // Howard Hinnant's civil-from-days and days-from-civil.
    static func civilDate(daysSinceEpoch z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The days of `month` (1–12) in `year`, leap years counted (the Gregorian calendar, as Python's).
    public static func daysIn(month: Int, year: Int) -> Int {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    public static func daysSinceEpoch(year y0: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
