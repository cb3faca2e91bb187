import JSON
import LiveActivity

/// Aivi templates shown as PushWard's generic template: the bar's value as `progress`, the main text as `state`, the
/// footer or the right-hand text as `subtitle`, a simple bar's colour as the accent, `remaining_time`, `tap_url` as
/// the tap action.
enum PushWardMapping {
    static func map(template: String, _ content: [String: JSONValue]) -> [String: JSONValue] {
        var out: [String: JSONValue] = ["template": "generic"]
        if let icon = content["icon"] { out["icon"] = icon.stringValue.map(JSONValue.string) ?? icon["name"] }
        if let url = content["tap_url"] { out["tap_action"] = ["url": url] }
        switch template {
        case "progress":
            out["progress"] = content["progress"]?["value"]
            out["state"] = content["header_left"]?["value"]
            out["subtitle"] = content["footer_left"]?["value"] ?? content["header_right"].flatMap { $0["formatter"] == nil ? $0["value"] : nil }
            if let colour = content["progress"]?["color"]?.stringValue, PushWardSchema.colours.contains(colour) { out["accent_color"] = .string(colour) }
        default:  // generic
            out["progress"] = content["progress"]
            out["state"] = content["state"]
            if let remaining = content["remaining_time"]?.doubleValue, remaining >= 0 { out["remaining_time"] = .int(Int(saturating: remaining.rounded())) }
        }
        return out.filter { $0.value != .null }
    }
}
