import Platform
import HomeAssistant
import JSON
import LiveActivity

/// Aivi progress and generic templates shown as Home Assistant live updates: the bar in percent, a countdown as a chronometer.
enum LiveUpdateMapping {
    static func map(template: String, _ content: [String: JSONValue], now: Double) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["progress_max": 100]
        switch template {
        case "progress":
            if let p = content["progress"]?["value"]?.doubleValue { fields["progress"] = .int(Int(saturating: (p * 100).rounded())) }
            fields["message"] = content["header_left"]?["value"] ?? content["footer_left"]?["value"] ?? ""
            for slot in ["header_right", "footer_right", "header_left", "footer_left"] {
                if content[slot]?["formatter"] == "time_until", let text = content[slot]?["value"]?.stringValue,
                   let epoch = Timestamp.epoch(fromISO8601: text) {
                    fields["when"] = .double(epoch)
                    fields["chronometer"] = true
                    break
                }
            }
        default:  // generic
            if let p = content["progress"]?.doubleValue { fields["progress"] = .int(Int(saturating: (p * 100).rounded())) }
            fields["message"] = content["state"] ?? ""
            if let remaining = content["remaining_time"]?.doubleValue {
                fields["when"] = .double(now + remaining)
                fields["chronometer"] = true
            }
        }
        return fields
    }
}
