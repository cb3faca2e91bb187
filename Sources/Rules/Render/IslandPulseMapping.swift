import JSON
import LiveActivity
import Platform
import HomeAssistant

/// Aivi templates shown on Island Pulse, where the shapes match: monitor's columns → sports' A and B,
/// progress and generic → the progress layout.
enum IslandPulseMapping {
    static func map(template: String, _ content: [String: JSONValue]) -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        if let icon = content["icon"] { body["icon"] = icon.stringValue.map(JSONValue.string) ?? icon["name"] }
        switch template {
        case "monitor":
            body["layout"] = "sports"
            body["metricA"] = content["left_column"]?["value"]?["value"]
            body["subA"] = content["left_column"]?["header"] ?? content["left_column"]?["footer"]
            body["metricB"] = content["right_column"]?["value"]?["value"]
            body["subB"] = content["right_column"]?["header"] ?? content["right_column"]?["footer"]
        case "progress":
            body["layout"] = "progress"
            body["progress"] = content["progress"]?["value"]
            body["metric"] = content["compact_value"]?["value"] ?? content["footer_right"]?["value"]
            body["message"] = content["header_left"]?["value"] ?? content["footer_left"]?["value"]
        default:  // generic
            body["layout"] = "progress"
            body["progress"] = content["progress"]
            body["message"] = content["state"]
            if let p = content["progress"]?.doubleValue { body["metric"] = .string("\(Int(saturating: (p * 100).rounded()))%") }
        }
        return body.filter { $0.value != .null }
    }

    /// The free tier shows the default layout only, which needs a message: the layout's figures say it in words.
    static func freeTier(_ body: inout [String: JSONValue]) {
        body["layout"] = "default"
        if (body["message"]?.stringValue ?? "").isEmpty, let summary = summary(body) { body["message"] = .string(summary) }
    }

    /// A one-line message from a layout's figures, for the default layout: "Room Kitchen · Area 12.5", "Step 2/5".
    static func summary(_ body: [String: JSONValue]) -> String? {
        func text(_ key: String) -> String? { body[key].flatMap(PayloadNormalizer.scalarText).flatMap { $0.isEmpty ? nil : $0 } }
        let sides = [(text("subA"), text("metricA")), (text("subB"), text("metricB"))].compactMap { label, value -> String? in
            guard let value else { return nil }
            return label.map { "\($0) \(value)" } ?? value
        }
        if !sides.isEmpty { return sides.joined(separator: " · ") }
        return text("metric") ?? text("secondaryMetric")
    }
}
