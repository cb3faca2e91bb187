import JSON
import LiveActivity

/// Aivi templates shown as ActivitySmith streams: progress and generic as its `progress` type (the main text as the
/// title, the footer or the right-hand text as the subtitle, the bar as a percentage), monitor as `stats` (each column
/// a metric, its header the label).
enum ActivitySmithMapping {
    static func map(template: String, _ content: [String: JSONValue], title fallback: String) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        func percent(_ fraction: JSONValue?) -> JSONValue? {
            fraction?.doubleValue.map { .double((min(max($0, 0), 1) * 1000).rounded() / 10) }
        }
        switch template {
        case "monitor":
            out["type"] = "stats"
            let columns = ["left_column", "right_column"].compactMap { content[$0] }
            out["metrics"] = .array(columns.compactMap { column in
                guard let value = column["value"]?["value"] ?? column["value"] else { return nil }
                return ["label": column["header"] ?? column["footer"] ?? "Value", "value": .string(value.stringValue ?? value.jsonText)]
            })
            out["title"] = .string(fallback)
        case "progress":
            out["type"] = "progress"
            out["title"] = content["header_left"]?["value"] ?? .string(fallback)
            out["subtitle"] = content["footer_left"]?["value"] ?? content["header_right"].flatMap { $0["formatter"] == nil ? $0["value"] : nil }
            out["percentage"] = percent(content["progress"]?["value"])
            if let colour = content["progress"]?["color"]?.stringValue, ActivitySmithSchema.colours.contains(colour) { out["color"] = .string(colour) }
        default:  // generic
            out["type"] = "progress"
            out["title"] = content["state"] ?? .string(fallback)
            out["percentage"] = percent(content["progress"])
        }
        return out.filter { $0.value != .null }
    }
}
