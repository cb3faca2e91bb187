import FoundationEssentials
import Platform
/// Durations as users write them: `5s`, `2m`, `1h30m`, `250ms`, `00:00:05`, or a bare number of seconds.
public enum ConfigDuration {
    public static func parse(_ text: String) -> Duration? {
        let t = text.trimmingSpaces()
        guard !t.isEmpty else { return nil }
        if let seconds = Double(t), seconds >= 0 { return .milliseconds(Int64((seconds * 1000).rounded())) }
        if t.contains(":") {
            let parts = t.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let h = Int(parts[0]), let m = Int(parts[1]), let s = Double(parts[2]), h >= 0, m >= 0, m < 60, s >= 0, s < 60
            else { return nil }
            return .milliseconds(Int64(((Double(h * 3600 + m * 60) + s) * 1000).rounded()))
        }
        var total = 0.0
        var number = ""
        var chars = Array(t)
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
        guard number.isEmpty else { return nil }
        chars = []
        return .milliseconds(Int64((total * 1000).rounded()))
    }
}

