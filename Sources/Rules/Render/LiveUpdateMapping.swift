import Platform
import JSON

/// Aivi progress and generic templates shown as Home Assistant live updates: the bar in percent (integers: the app
/// drops floats), a countdown as a chronometer, the trailing text as `critical_text`, `tap_url` as `url`.
enum LiveUpdateMapping {
    static func map(template: String, _ content: [String: JSONValue], now: Double) -> [String: JSONValue] {
        var fields: [String: JSONValue] = ["progress_max": 100]
        if let url = content["tap_url"] { fields["url"] = url }
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
            // The trailing text: the right-hand value that is not the countdown.
            for slot in ["header_right", "footer_right"] where content[slot]?["formatter"] == nil {
                if let text = content[slot]?["value"], text.stringValue?.isEmpty == false {
                    fields["critical_text"] = text
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
