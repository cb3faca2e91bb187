import FoundationEssentials
import Platform

/// Durations as users write them: Home Assistant's forms (`00:05:00`, `5:00` as hours:minutes, a number of seconds,
/// `{hours: 1, minutes: 5}` as in an automation's `delay:`) and LiveBridge's short ones (`5s`, `2m`, `1h30m`,
/// `250ms`, `1d`). Never negative, at most `longest`.
public enum ConfigDuration {
    /// The longest duration a rules file may give: a budget or a timeout beyond a week is a mistake.
    public static let longest = Duration.seconds(7 * 86_400)

    /// Why a value is not a duration, and where (a key of a `{hours: …}` mapping has its own place).
    public struct ParseError: Error, Equatable {
        public let message: String
        public var location: SourceLocation?
        /// The key inside a mapping form that is wrong, if any.
        public var key: String?
    }

    /// The keys of Home Assistant's mapping form, with their length in seconds.
    static let units: [(key: String, seconds: Double)] = [("days", 86_400), ("hours", 3600), ("minutes", 60), ("seconds", 1), ("milliseconds", 0.001)]

    static let hint = "write 5s, 2m, 1h30m, 00:05:00 or {minutes: 5}"

    public static func parse(_ node: YAMLNode) -> Result<Duration, ParseError> {
        switch node.kind {
        case .scalar(let text):
            guard let seconds = seconds(text) else {
                return .failure(ParseError(message: "\(node.quoted) is not a duration; \(hint)"))
            }
            return checked(seconds, shown: node.quoted)
        case .mapping(let entries):
            var total = 0.0
            for (key, value) in entries {
                let name = key.scalar ?? ""
                guard let unit = units.first(where: { $0.key == name }) else {
                    var message = "unknown key \"\(name)\" in a duration"
                    message += Suggestion.didYouMean(name, in: units.map(\.key), otherwise: "; expected: " + units.map(\.key).joined(separator: ", "))
                    return .failure(ParseError(message: message, location: key.location, key: name))
                }
                guard let text = value.scalar, let n = Double(text.trimmingSpaces()), n.isFinite else {
                    return .failure(ParseError(message: "\(value.quoted) is not a number of \(name)", location: value.location, key: name))
                }
                total += n * unit.seconds
            }
            guard !entries.isEmpty else { return .failure(ParseError(message: "an empty mapping is not a duration; \(hint)")) }
            return checked(total, shown: "this duration")
        case .sequence:
            return .failure(ParseError(message: "a list is not a duration; \(hint)"))
        }
    }

    public static func parse(_ text: String) -> Duration? {
        guard let seconds = seconds(text), seconds >= 0, seconds <= 7 * 86_400 else { return nil }
        return milliseconds(seconds)
    }

    private static func checked(_ seconds: Double, shown: String) -> Result<Duration, ParseError> {
        guard seconds >= 0 else { return .failure(ParseError(message: "\(shown) is negative; a duration is 0s or longer")) }
        guard seconds <= 7 * 86_400 else { return .failure(ParseError(message: "\(shown) is longer than 7 days")) }
        return .success(milliseconds(seconds))
    }

    private static func milliseconds(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// Seconds from the text forms, possibly negative or huge (checked by the caller); nil if not a duration.
    static func seconds(_ text: String) -> Double? {
        var t = Substring(text.trimmingSpaces())
        guard !t.isEmpty else { return nil }
        if let seconds = Double(t) { return seconds.isFinite ? seconds : nil }
        if t.contains(":") {
            // Home Assistant's time_period_str: [-+]H:MM or [-+]H:MM:SS(.fff), minutes and seconds not bounded.
            var sign = 1.0
            if t.hasPrefix("-") { sign = -1; t = t.dropFirst() } else if t.hasPrefix("+") { t = t.dropFirst() }
            let parts = t.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count), let h = Int(parts[0]), let m = Int(parts[1]), h >= 0, m >= 0 else { return nil }
            let s = parts.count == 3 ? Double(parts[2]) : 0
            guard let s, s.isFinite, s >= 0 else { return nil }
            return sign * (Double(h) * 3600 + Double(m) * 60 + s)
        }
        var total = 0.0
        var number = ""
        let chars = Array(t)
        var index = 0
        guard chars.first?.isNumber == true else { return nil }
        while index < chars.count {
            let c = chars[index]
            if c.isNumber || c == "." { number.append(c); index += 1; continue }
            guard let n = Double(number) else { return nil }
            number = ""
            var unit = String(c)
            if c == "m", index + 1 < chars.count, chars[index + 1] == "s" { unit = "ms"; index += 1 }
            switch unit {
            case "h": total += n * 3600
            case "m": total += n * 60
            case "s": total += n
            case "ms": total += n / 1000
            case "d": total += n * 86_400
            default: return nil
            }
            index += 1
        }
        guard number.isEmpty, total.isFinite else { return nil }
        return total
    }
}
