public import JSON
import HomeAssistant
import Platform

/// A value inside a template expression: Jinja's types as Home Assistant templates use them.
public enum TemplateValue: Sendable, Equatable {
    case none
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    /// A point in time, seconds since 1970, with the UTC offset it is shown in: 0 for Home Assistant's UTC times
    /// (`as_datetime`, `last_changed`), the local zone's for `now()` and `as_local`. Python compares them by instant.
    /// With the offset `TemplateValue.naive` it is a wall time without a zone (`strptime` without `%z`), its seconds
    /// that wall time read as UTC.
    case datetime(Double, offset: Int = 0)
    /// A duration in seconds.
    case timedelta(Double)
    /// Python's `date`: a day without a zone, as days since 1970-01-01 (`CalendarValues`).
    case date(Int)
    /// Python's `time`: a wall-clock time without a zone, as microseconds since midnight.
    case time(Int)
    case list([TemplateValue])
    case mapping(TemplateMapping)
    /// Jinja's undefined: what a lookup that found nothing gives (a missing attribute or key, an index past the end,
    /// `first` of nothing). It prints as nothing, is false, iterates as empty, is not `defined` and `default`
    /// replaces it; arithmetic on it, a number made of it, or a lookup in it fails with `why`.
    case undefined(String)

    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .none
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .array(let a): self = .list(a.map(TemplateValue.init))
        case .object(let o): self = .mapping(TemplateMapping(sorting: o.mapValues(TemplateValue.init)))
        }
    }

    /// Jinja truthiness.
    public var isTruthy: Bool {
        switch self {
        case .none: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0
        case .string(let s): return !s.isEmpty
        case .datetime: return true
        case .timedelta(let s): return s != 0
        case .date, .time: return true
        case .undefined: return false
        case .list(let l): return !l.isEmpty
        case .mapping(let m): return !m.isEmpty
        }
    }

    /// The number this value is, if it is one (booleans count, as in Python).
    public var number: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// A key that is the same for values Python's set holds as one (`1`, `1.0`, `True`), for hashing.
    var identityKey: String {
        switch self {
        case .bool(let b): return b ? "n1" : "n0"
        case .int(let i): return "n\(i)"
        case .double(let d): return Int(exactly: d).map { "n\($0)" } ?? "n" + repr
        default: return "v" + repr
        }
    }

    /// Whether this value is text: Python does no arithmetic across text and numbers.
    var isText: Bool { if case .string = self { true } else { false } }

    /// The integer this value is, if it is one (booleans count, as in Python).
    var integer: Int? {
        switch self {
        case .int(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// What `{{ value }}` prints: Python's str() (a datetime with a space: `2026-11-22 13:30:00+00:00`).
    public var text: String {
        switch self {
        case .none: return "None"
        case .bool(let b): return b ? "True" : "False"
        case .int(let i): return String(i)
        case .double(let d): return TemplateValue.pythonFloat(d)
        case .string(let s): return s
        case .datetime(let epoch, let offset): return TemplateValue.isoformat(epoch, offset, separator: " ")
        case .timedelta(let seconds): return TemplateValue.durationText(seconds)
        case .date(let days): return CalendarValues.text(date: days)
        case .time(let micros): return CalendarValues.text(time: micros)
        case .undefined: return ""
        case .list, .mapping:
            var out = ""
            write(into: &out)
            return out
        }
    }

    /// A list's or mapping's str() written into `out`, stopping once past `EvaluationLimits.maximumTextLength` (the
    /// rest cut): a list repeated or nested into itself may hold far more text than memory, so it is never built whole.
    /// Whoever needs it whole checks its length (`EvaluationLimits.printable`).
    func write(into out: inout String) {
        guard out.utf8.count <= EvaluationLimits.maximumTextLength else { return }
        switch self {
        case .list(let items):
            out += "["
            for (i, item) in items.enumerated() {
                guard out.utf8.count <= EvaluationLimits.maximumTextLength else { return }
                if i > 0 { out += ", " }
                if case .string = item { out += item.repr } else { item.write(into: &out) }
            }
            out += "]"
        case .mapping(let m) where m.entity != nil:
            out += TemplateValue.stateText(m.entity!.state, zone: m.entity!.zone)  // a state object
        case .mapping(let m):
            out += "{"
            for (i, key) in m.keys.enumerated() {
                guard out.utf8.count <= EvaluationLimits.maximumTextLength else { return }
                if i > 0 { out += ", " }
                out += TemplateValue.string(key).repr + ": "
                let value = m[key]!
                if case .string = value { out += value.repr } else { value.write(into: &out) }
            }
            out += "}"
        case .string: out += repr
        case .undefined: out += "Undefined"  // Jinja's repr, inside a list or dict
        default: out += text
        }
    }

    /// How Home Assistant prints a state object (TemplateState's repr, which is also its str()): the id, the state,
    /// the attributes in order as `name=value` (a mapping's members the same way, without braces), and when the state
    /// last changed, in the local zone.
    static func stateText(_ state: EntityState, zone: LocalTimeZone) -> String {
        func helper(_ value: JSONValue) -> String {
            if case .object(let members) = value {
                return members.keys.sorted().map { "\($0)=\(helper(members[$0]!))" }.joined(separator: ", ")
            }
            return TemplateValue(value).text
        }
        var out = "<template TemplateState(<state " + state.entityID + "=" + state.state
        if !state.attributes.isEmpty {
            out += "; " + state.attributes.map { "\($0.key)=\(helper($0.value))" }.joined(separator: ", ")
        }
        let changed = state.lastChanged
        out += " @ " + isoformat(changed, zone.secondsFromGMT(at: changed)) + ">)>"
        return out
    }

    /// Python's repr(): a string in single quotes, or double when it holds a single quote and no double one, with
    /// backslashes, line breaks and control characters escaped.
    var repr: String {
        guard case .string(let s) = self else { return text }
        let quote: Character = s.contains("'") && !s.contains("\"") ? "\"" : "'"
        var out = String(quote)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where Character(scalar) == quote: out += "\\" + String(quote)
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\x" + String(repeating: "0", count: scalar.value < 16 ? 1 : 0) + String(scalar.value, radix: 16)
            case _ where scalar.value >= 0x80 && !Self.isPrintable(scalar):
                // Python's repr: \xhh, \uhhhh or \Uhhhhhhhh for what str.isprintable() refuses (U+0085, U+2028, U+00A0…).
                let hex = String(scalar.value, radix: 16)
                let (prefix, width) = scalar.value < 0x100 ? ("\\x", 2) : scalar.value < 0x10000 ? ("\\u", 4) : ("\\U", 8)
                out += prefix + String(repeating: "0", count: width - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append(quote)
        return out
    }

    /// Python's `str.isprintable()` of one code point: not a control, format, surrogate, private-use or unassigned
    /// code point, nor a line, paragraph or space separator other than the space itself.
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: false
        case .spaceSeparator: scalar == " "
        default: true
        }
    }

    var typeName: String {
        switch self {
        case .none: return "none"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "float"
        case .string: return "string"
        case .datetime: return "datetime"
        case .timedelta: return "timedelta"
        case .date: return "date"
        case .time: return "time"
        case .list: return "list"
        case .mapping: return "mapping"
        case .undefined: return "undefined"
        }
    }

    /// Python's name for the type, as Home Assistant's `typeof` gives it.
    var pythonTypeName: String {
        switch self {
        case .none: return "NoneType"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "float"
        case .string: return "str"
        case .datetime: return "datetime"
        case .timedelta: return "timedelta"
        case .date: return "date"
        case .time: return "time"
        case .list: return "list"
        case .mapping: return "dict"
        case .undefined: return "Undefined"
        }
    }

    /// The JSON a payload field receives.
    public var json: JSONValue {
        switch self {
        case .none: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s): return .string(s)
        case .datetime(let epoch, let offset): return .string(TemplateValue.isoformat(epoch, offset))  // ISO 8601, as formatters and backends read it
        case .timedelta, .date, .time: return .string(text)
        case .list(let l): return .array(l.map(\.json))
        case .mapping(let m): return .object(m.dictionary.mapValues(\.json))
        case .undefined: return .null
        }
    }

    /// The offset of a naive datetime: Python's datetime without tzinfo.
    static let naive = Int.min

    /// A datetime's wall-clock seconds, from which its fields (hour, day…) are read.
    static func wallTime(_ epoch: Double, _ offset: Int) -> Double { offset == naive ? epoch : epoch + Double(offset) }

    /// The instant a datetime stands for; a naive one is read in the local zone, as Python's `timestamp()` does.
    static func instant(_ epoch: Double, _ offset: Int, zone: LocalTimeZone) -> Double {
        guard offset == naive else { return epoch }
        return epoch - Double(zone.secondsFromGMT(at: epoch - Double(zone.secondsFromGMT(at: epoch))))
    }

    /// Python's isoformat(): the offset last, none for a naive datetime.
    static func isoformat(_ epoch: Double, _ offset: Int, separator: String = "T") -> String {
        guard offset == naive else { return Timestamp.iso8601(epoch, offset: offset, separator: separator) }
        return String(Timestamp.iso8601(epoch, offset: 0, separator: separator).dropLast(6))
    }

    static func pythonFloat(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return d.description
    }

    /// The durations Python's `timedelta` can hold: ±999,999,999 days (to the whole second at the top: a Double this
    /// large has no microseconds left).
    static let timedeltaRange: ClosedRange<Double> = -86_399_999_999_999 ... 86_399_999_999_999

    /// A datetime, or the error Python raises for an instant outside years 1–9999 (or NaN).
    static func datetime(checked epoch: Double, offset: Int = 0, _ what: @autoclosure () -> String = "date") throws(EvaluationError) -> TemplateValue {
        guard let epoch = Timestamp.checked(epoch) else {
            throw EvaluationError("\(what()) value out of range: \(pythonFloat(epoch)) seconds since 1970 is outside years 1–9999")
        }
        return .datetime(epoch, offset: offset)
    }

    /// A timedelta, or the error Python raises for NaN or more than 999,999,999 days.
    static func timedelta(checked seconds: Double) throws(EvaluationError) -> TemplateValue {
        guard timedeltaRange.contains(seconds) else {
            throw EvaluationError(seconds.isNaN ? "timedelta of nan: cannot convert float NaN to integer"
                                  : "timedelta of \(pythonFloat(seconds)) seconds is beyond ±999,999,999 days")
        }
        return .timedelta(seconds)
    }

    /// Python's str(timedelta): `1:25:00`, `2 days, 0:00:05`, `-1 day, 23:59:50`. Total: values outside
    /// `timedeltaRange` (which `timedelta(checked:)` keeps out) are clamped into it.
    static func durationText(_ unclamped: Double) -> String {
        let seconds = unclamped.isNaN ? 0 : min(max(unclamped, timedeltaRange.lowerBound), timedeltaRange.upperBound)
        // Whole days apart from the rest: 999,999,999 days in microseconds would not fit in 64 bits.
        var days = Int64((seconds / 86_400).rounded(.down))
        var micros = Int64(((seconds - Double(days) * 86_400) * 1_000_000).rounded())
        if micros >= 86_400_000_000 { micros -= 86_400_000_000; days += 1 }
        if micros < 0 { micros += 86_400_000_000; days -= 1 }
        let total = micros / 1_000_000
        let fraction = micros % 1_000_000
        var text = "\(total / 3600):" + two(total % 3600 / 60) + ":" + two(total % 60)
        if fraction != 0 {
            let f = String(fraction)
            text += "." + String(repeating: "0", count: 6 - f.count) + f
        }
        if days != 0 {
            text = "\(days) day\(abs(days) == 1 ? "" : "s"), " + text
        }
        return text
    }

    private static func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
}

