import Platform

/// Python's `date` and `time`, as a datetime's `.date()` and `.time()` give them: "days until the bin goes out"
/// (`(as_datetime(x).date() - now().date()).days`) and "after 22:00" (`now().time() > …`). A date is a day without a
/// zone, a time a wall-clock time without a zone; they print as `2026-11-25` and `13:30:00`.
enum CalendarValues {
    /// The days a Python date may be: 0001-01-01 to 9999-12-31, as days since 1970-01-01.
    static let days = Int(Timestamp.daysSinceEpoch(year: 1, month: 1, day: 1))...Int(Timestamp.daysSinceEpoch(year: 9999, month: 12, day: 31))
    static let microsecondsPerDay = 86_400_000_000

    static func date(checked days: Int) throws(EvaluationError) -> TemplateValue {
        guard Self.days.contains(days) else { throw EvaluationError("date value out of range") }
        return .date(days)
    }

    /// The wall-clock day of a datetime, in its own zone.
    static func date(of epoch: Double, _ offset: Int) -> TemplateValue {
        let wall = TemplateValue.wallTime(epoch, offset)
        return .date(Int((wall / 86_400).rounded(.down)))
    }

    /// The wall-clock time of a datetime, in its own zone, to the microsecond.
    static func time(of epoch: Double, _ offset: Int) -> TemplateValue {
        let c = Timestamp.components(TemplateValue.wallTime(epoch, offset))
        return .time(((c.hour * 60 + c.minute) * 60 + c.second) * 1_000_000 + c.microsecond)
    }

    static func text(date days: Int) -> String {
        let c = Timestamp.components(Double(days) * 86_400)
        return pad(c.year, 4) + "-" + pad(c.month, 2) + "-" + pad(c.day, 2)
    }

    static func text(time micros: Int) -> String {
        let seconds = micros / 1_000_000, fraction = micros % 1_000_000
        var text = pad(seconds / 3600, 2) + ":" + pad(seconds / 60 % 60, 2) + ":" + pad(seconds % 60, 2)
        if fraction != 0 { text += "." + pad(fraction, 6) }
        return text
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let text = String(n)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// `year`, `month`, `day` of a date; `hour`, `minute`, `second`, `microsecond` of a time; nil for other values.
    static func field(_ value: TemplateValue, _ name: String) throws(EvaluationError) -> TemplateValue? {
        switch value {
        case .date(let days):
            let c = Timestamp.components(Double(days) * 86_400)
            switch name {
            case "year": return .int(c.year)
            case "month": return .int(c.month)
            case "day": return .int(c.day)
            default: throw EvaluationError("date \(value.text) has no attribute \"\(name)\"; it has year, month, day")
            }
        case .time(let micros):
            switch name {
            case "hour": return .int(micros / 3_600_000_000)
            case "minute": return .int(micros / 60_000_000 % 60)
            case "second": return .int(micros / 1_000_000 % 60)
            case "microsecond": return .int(micros % 1_000_000)
            default: throw EvaluationError("time \(value.text) has no attribute \"\(name)\"; it has hour, minute, second, microsecond")
            }
        default:
            return nil
        }
    }

    /// A date's or time's methods: isoformat, strftime, weekday, isoweekday, replace; nil for other values.
    static func call(_ method: Method, on value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue])
        throws(EvaluationError) -> TemplateValue? {
        switch (method, value) {
        case (.isoformat, .date), (.isoformat, .time): return .string(value.text)
        case (.strftime, .date(let days)):
            return .string(StrftimeFormat.format(args.first?.text ?? "%Y-%m-%d", epoch: Double(days) * 86_400, utcOffset: nil))
        case (.strftime, .time(let micros)):
            // Python formats a time as 1900-01-01 at that time.
            let base = Double(Timestamp.daysSinceEpoch(year: 1900, month: 1, day: 1)) * 86_400
            return .string(StrftimeFormat.format(args.first?.text ?? "%H:%M:%S", epoch: base + Double(micros) / 1_000_000, utcOffset: nil))
        case (.weekday, .date(let days)): return .int(Timestamp.components(Double(days) * 86_400).weekday)
        case (.isoweekday, .date(let days)): return .int(Timestamp.components(Double(days) * 86_400).weekday + 1)
        case (.replace, .date(let days)):
            guard args.isEmpty else { throw EvaluationError("date.replace() takes keyword arguments: year, month, day") }
            let c = Timestamp.components(Double(days) * 86_400)
            let year = try field(keywords, "year", c.year, 1...9999), month = try field(keywords, "month", c.month, 1...12)
            let day = try field(keywords, "day", c.day, 1...31)
            guard day <= Timestamp.daysIn(month: month, year: year) else { throw EvaluationError("day is out of range for month") }
            return .date(Int(Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(day))))
        case (.replace, .time(let micros)):
            guard args.isEmpty else { throw EvaluationError("time.replace() takes keyword arguments: hour, minute, second, microsecond") }
            let hour = try field(keywords, "hour", micros / 3_600_000_000, 0...23)
            let minute = try field(keywords, "minute", micros / 60_000_000 % 60, 0...59)
            let second = try field(keywords, "second", micros / 1_000_000 % 60, 0...59)
            let micro = try field(keywords, "microsecond", micros % 1_000_000, 0...999_999)
            return .time(((hour * 60 + minute) * 60 + second) * 1_000_000 + micro)
        case (.today, .date): return nil  // Methods: it needs now()
        case (_, .date), (_, .time):
            throw EvaluationError("\(value.pythonTypeName) has no method \(method.rawValue)()")
        default:
            return nil
        }
    }

    private static func field(_ keywords: [String: TemplateValue], _ name: String, _ current: Int, _ range: ClosedRange<Int>)
        throws(EvaluationError) -> Int {
        guard let given = keywords[name] else { return current }
        guard let n = given.integer, range.contains(n) else {
            throw EvaluationError("\(name) must be in \(range.lowerBound)..\(range.upperBound), got \(given.repr)")
        }
        return n
    }

    /// Date arithmetic as Python's: a date and a timedelta's whole days (rounded down, as `timedelta.days`), the
    /// days between two dates. Nil when neither side is a date.
    static func arithmetic(_ op: BinaryOperator, _ l: TemplateValue, _ r: TemplateValue) throws(EvaluationError) -> TemplateValue? {
        func wholeDays(_ seconds: Double) throws(EvaluationError) -> Int {
            guard TemplateValue.timedeltaRange.contains(seconds) else { throw EvaluationError("date value out of range") }
            return Int((seconds / 86_400).rounded(.down))
        }
        switch (op, l, r) {
        case (.add, .date(let d), .timedelta(let s)), (.add, .timedelta(let s), .date(let d)):
            return try date(checked: d + wholeDays(s))
        case (.subtract, .date(let d), .timedelta(let s)):
            return try date(checked: d - wholeDays(s))
        case (.subtract, .date(let a), .date(let b)):
            return .timedelta(Double(a - b) * 86_400)
        default:
            return nil
        }
    }
}
