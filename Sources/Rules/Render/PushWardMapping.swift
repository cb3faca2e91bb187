import Platform
import JSON
import LiveActivity

/// Aivi templates shown as PushWard's: progress and generic as its generic template (the bar's value as `progress`,
/// the main text as `state`, the footer or the right-hand text as `subtitle`, a simple bar's colour as the accent,
/// `remaining_time`); monitor as its board (each column a tile: header as label, value as value, footers as the
/// subtitle). `tap_url` is the tap action.
enum PushWardMapping {
    static func map(template: String, _ content: [String: JSONValue], now: Double) -> [String: JSONValue] {
        var out: [String: JSONValue] = ["template": template == "monitor" ? "board" : "generic"]
        if let icon = content["icon"] { out["icon"] = icon.stringValue.map(JSONValue.string) ?? icon["name"] }
        if let url = content["tap_url"] { out["tap_action"] = ["url": url] }
        switch template {
        case "monitor":
            var names = ["left_column", "right_column"]
            if content["primary_column"] == "right" { names.reverse() }
            let columns = names.compactMap { name in content[name].map { (name, $0) } }
            out["tiles"] = .array(columns.map { name, column in tile(column, fallbackLabel: name == "left_column" ? "Left" : "Right", now: now) })
            let footers = columns.compactMap { $0.1["footer"]?.stringValue }.filter { !$0.isEmpty }
            if !footers.isEmpty { out["subtitle"] = .string(footers.joined(separator: " · ")) }
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

    /// A monitor column as a board tile. A tile's value is text of 16 characters at most: a longer value is cut with
    /// an ellipsis, and a `time_until`/`time_since` value is the time left or passed (`1:05`, `12 min`, `3 min ago`).
    static func tile(_ column: JSONValue, fallbackLabel: String, now: Double) -> JSONValue {
        var tile: [String: JSONValue] = ["label": .string(cut(column["header"]?.stringValue ?? fallbackLabel, to: 32))]
        let value = column["value"]
        var text = value?["value"]?.stringValue ?? ""
        if let formatter = value?["formatter"]?.stringValue, let epoch = Timestamp.epoch(fromISO8601: text) {
            let seconds = formatter == "time_until" ? epoch - now : now - epoch
            text = span(max(seconds, 0)) + (formatter == "time_since" ? " ago" : "")
        }
        tile["value"] = .string(cut(text.isEmpty ? "–" : text, to: 16))
        if let colour = value?["text_color"]?.stringValue, PushWardSchema.colours.contains(colour) { tile["color"] = .string(colour) }
        return .object(tile)
    }

    static func span(_ seconds: Double) -> String {
        let minutes = Int(saturating: (seconds / 60).rounded())
        return minutes < 60 ? "\(minutes) min" : "\(minutes / 60):" + (minutes % 60 < 10 ? "0" : "") + "\(minutes % 60)"
    }

    static func cut(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
