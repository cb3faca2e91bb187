import Glibc
import FoundationEssentials
import Platform

/// Python's strftime for the directives people use in `timestamp_custom`.
enum StrftimeFormat {
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    static let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    static func format(_ format: String, epoch: Double, utcOffset: Int?, zoneName: String = "") -> String {
        let c = Timestamp.components(epoch)
        var out = ""
        var chars = Array(format)[...]
        while let ch = chars.popFirst() {
            guard ch == "%" else { out.append(ch); continue }
            // glibc's flags, which Python's strftime passes through: - (no padding), _ (spaces), 0 (zeros), ^ (upper case).
            var flag: Character?
            if let f = chars.first, "-_0^#".contains(f) { flag = f; chars.removeFirst() }
            guard let directive = chars.popFirst() else { out.append("%"); if let flag { out.append(flag) }; break }
            guard let text = field(directive, c, epoch: epoch, utcOffset: utcOffset, zoneName: zoneName, format: format) else {
                out += "%" + (flag.map(String.init) ?? "") + String(directive)
                continue
            }
            out += apply(flag, to: text, directive: directive)
        }
        return out
    }

    /// The text of one directive with its C-locale padding; nil for a directive glibc does not know (left as written).
    private static func field(_ d: Character, _ c: Timestamp.Components, epoch: Double, utcOffset: Int?, zoneName: String,
                              format: String) -> String? {
        func pad(_ n: Int, _ w: Int = 2, _ fill: Character = "0") -> String {
            let s = String(n)
            return String(repeating: fill, count: max(0, w - s.count)) + s
        }
        let hour12 = c.hour % 12 == 0 ? 12 : c.hour % 12
        switch d {
        case "Y": return String(c.year)
        case "C": return pad(c.year / 100)
        case "y": return pad(c.year % 100)
        case "m": return pad(c.month)
        case "d": return pad(c.day)
        case "e": return pad(c.day, 2, " ")
        case "H": return pad(c.hour)
        case "k": return pad(c.hour, 2, " ")
        case "I": return pad(hour12)
        case "l": return pad(hour12, 2, " ")
        case "M": return pad(c.minute)
        case "S": return pad(c.second)
        case "f": return pad(c.microsecond, 6)
        case "p": return c.hour < 12 ? "AM" : "PM"
        case "P": return c.hour < 12 ? "am" : "pm"
        case "b", "h": return String(months[c.month - 1].prefix(3))
        case "B": return months[c.month - 1]
        case "a": return String(weekdays[c.weekday].prefix(3))
        case "A": return weekdays[c.weekday]
        case "j": return pad(c.dayOfYear, 3)
        case "w": return String((c.weekday + 1) % 7)
        case "u": return String(c.weekday + 1)
        case "U": return pad((c.dayOfYear + 6 - (c.weekday + 1) % 7) / 7)
        case "W": return pad((c.dayOfYear + 6 - c.weekday) / 7)
        case "V", "G", "g":
            let (year, week) = isoWeek(c)
            return d == "V" ? pad(week) : d == "G" ? String(year) : pad(year % 100)
        case "D", "x": return pad(c.month) + "/" + pad(c.day) + "/" + pad(c.year % 100)
        case "F": return String(c.year) + "-" + pad(c.month) + "-" + pad(c.day)
        case "R": return pad(c.hour) + ":" + pad(c.minute)
        case "T", "X": return pad(c.hour) + ":" + pad(c.minute) + ":" + pad(c.second)
        case "r": return pad(hour12) + ":" + pad(c.minute) + ":" + pad(c.second) + " " + (c.hour < 12 ? "AM" : "PM")
        case "c":
            return String(weekdays[c.weekday].prefix(3)) + " " + String(months[c.month - 1].prefix(3)) + " " + pad(c.day, 2, " ") + " "
                + pad(c.hour) + ":" + pad(c.minute) + ":" + pad(c.second) + " " + String(c.year)
        case "s": return String(Int64((epoch - Double(utcOffset ?? 0)).rounded(.down)))
        case "n": return "\n"
        case "t": return "\t"
        case "z":
            guard let utcOffset else { return "" }
            let sign = utcOffset < 0 ? "-" : "+"
            return sign + pad(Swift.abs(utcOffset) / 3600) + pad(Swift.abs(utcOffset) % 3600 / 60)
        case "Z": return zoneName
        case "%": return "%"
        default: return nil
        }
    }

    /// ISO 8601's week-numbering year and week.
    private static func isoWeek(_ c: Timestamp.Components) -> (Int, Int) {
        let isoWeekday = c.weekday + 1  // Monday 1 … Sunday 7
        var week = (c.dayOfYear - isoWeekday + 10) / 7
        var year = c.year
        func weeks(_ y: Int) -> Int {
            // A year has 53 weeks when it starts on a Thursday, or on a Wednesday in a leap year.
            let jan1 = Timestamp.components(Double(Timestamp.daysSinceEpoch(year: Int64(y), month: 1, day: 1)) * 86_400).weekday
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
            return jan1 == 3 || (leap && jan1 == 2) ? 53 : 52
        }
        if week < 1 { year -= 1; week = weeks(year) } else if week > weeks(year) { year += 1; week = 1 }
        return (year, week)
    }

    /// glibc's flags on a directive's text: `-` drops the padding, `_` pads with spaces, `0` with zeros, `^` upper case.
    private static func apply(_ flag: Character?, to text: String, directive: Character) -> String {
        switch flag {
        case "-":
            guard text.count > 1, "dmHIMSjyCeklUWVgyf".contains(directive) else { return text }
            let trimmed = text.drop { $0 == "0" || $0 == " " }
            return trimmed.isEmpty ? "0" : String(trimmed)
        case "_":
            guard "dmHIMSjyCUWVg".contains(directive) else { return text }
            let digits = text.drop { $0 == "0" }
            return String(repeating: " ", count: text.count - max(digits.count, 1)) + (digits.isEmpty ? "0" : String(digits))
        case "0":
            return String(text.map { $0 == " " ? "0" : $0 })
        case "^":
            return text.uppercased()
        default:
            return text
        }
    }
}
