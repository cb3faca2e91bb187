import Platform

/// Python's `datetime.strptime(text, format)`, as Home Assistant's `strptime` calls it: the directives people use
/// (`%Y %y %m %d %H %I %M %S %f %p %b %B %a %A %j %z %%`), whitespace in the format matching any run of it, the rest
/// matched literally, without case. Without `%z` the result is naive (no zone), as Python's is.
enum Strptime {
    static func parse(_ text: String, _ format: String) -> TemplateValue? {
        var input = Substring(text)
        var year = 1900, month = 1, day = 1, hour = 0, minute = 0, second = 0, microsecond = 0
        var twelveHour: Int?, afternoon: Bool?, dayOfYear: Int?
        var offset: Int?
        var formatChars = Array(format)[...]

        func digits(_ maximum: Int) -> Int? {
            let run = input.prefix(maximum).prefix { $0.isASCII && $0.isNumber }
            guard !run.isEmpty else { return nil }
            input = input.dropFirst(run.count)
            return Int(run)
        }
        func word(_ names: [String]) -> Int? {
            // The longest name that matches, without case (full month names before their abbreviations).
            let lowered = input.prefix(9).lowercased()
            let candidates = names.enumerated().flatMap { [($0.offset, $0.element.lowercased()), ($0.offset, String($0.element.prefix(3)).lowercased())] }
            guard let best = candidates.filter({ lowered.hasPrefix($0.1) }).max(by: { $0.1.count < $1.1.count }) else { return nil }
            input = input.dropFirst(best.1.count)
            return best.0
        }

        while let f = formatChars.popFirst() {
            if f.isWhitespace {
                while formatChars.first?.isWhitespace == true { formatChars.removeFirst() }
                input = input.drop { $0.isWhitespace }
                continue
            }
            guard f == "%" else {
                guard let c = input.first, c.lowercased() == f.lowercased() else { return nil }
                input.removeFirst()
                continue
            }
            guard let directive = formatChars.popFirst() else { return nil }
            switch directive {
            case "Y": guard let v = digits(4) else { return nil }; year = v
            case "y": guard let v = digits(2) else { return nil }; year = v < 69 ? 2000 + v : 1900 + v
            case "m": guard let v = digits(2), (1...12).contains(v) else { return nil }; month = v
            case "d": guard let v = digits(2), (1...31).contains(v) else { return nil }; day = v
            case "H": guard let v = digits(2), v < 24 else { return nil }; hour = v
            case "I": guard let v = digits(2), (1...12).contains(v) else { return nil }; twelveHour = v
            case "M": guard let v = digits(2), v < 60 else { return nil }; minute = v
            case "S": guard let v = digits(2), v < 62 else { return nil }; second = min(v, 59)
            case "j": guard let v = digits(3), (1...366).contains(v) else { return nil }; dayOfYear = v
            case "f":
                let run = input.prefix(6).prefix { $0.isASCII && $0.isNumber }
                guard !run.isEmpty else { return nil }
                input = input.dropFirst(run.count)
                microsecond = Int(run + String(repeating: "0", count: 6 - run.count))!
            case "p":
                let lowered = input.prefix(2).lowercased()
                guard lowered == "am" || lowered == "pm" else { return nil }
                afternoon = lowered == "pm"
                input = input.dropFirst(2)
            case "b", "B": guard let v = word(StrftimeFormat.months) else { return nil }; month = v + 1
            case "a", "A": guard word(StrftimeFormat.weekdays) != nil else { return nil }
            case "z":
                if input.first == "Z" || input.first == "z" { input.removeFirst(); offset = 0; break }
                guard let sign = input.first, sign == "+" || sign == "-" else { return nil }
                input.removeFirst()
                guard let hours = digits(2) else { return nil }
                if input.first == ":" { input.removeFirst() }
                // Python: minutes 00–59, and the offset strictly within a day.
                guard let minutes = digits(2), minutes < 60, hours < 24 else { return nil }
                offset = (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
            case "Z":
                // Python's %Z takes UTC or GMT (or the machine's zone names) and leaves the time naive.
                let name = input.prefix(3).uppercased()
                guard name == "UTC" || name == "GMT" else { return nil }
                input = input.dropFirst(3)
            case "%": guard input.first == "%" else { return nil }; input.removeFirst()
            default: return nil
            }
        }
        guard input.isEmpty else { return nil }
        if let twelveHour { hour = twelveHour % 12 + (afternoon == true ? 12 : 0) }
        if let dayOfYear { month = 1; day = dayOfYear }
        let days = Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: Int64(dayOfYear == nil ? day : 1))
        let wall = Double(days + Int64(dayOfYear.map { $0 - 1 } ?? 0)) * 86_400 + Double(hour * 3600 + minute * 60 + second)
            + Double(microsecond) / 1_000_000
        if dayOfYear == nil, Timestamp.components(wall).day != day { return nil }  // 31 February
        guard let offset else { return .datetime(wall, offset: TemplateValue.naive) }
        return .datetime(wall - Double(offset), offset: offset)
    }
}
