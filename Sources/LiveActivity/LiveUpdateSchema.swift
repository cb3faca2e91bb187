import JSON

/// Home Assistant's own Live Activities through the companion app: the fields a rule gives,
/// sent as `notify.mobile_app_…` with `data.live_update: true` and ended with `clear_notification`.
public enum LiveUpdateSchema {
    static let color = FieldSchema.custom(name: "a colour", check: CSSColor.problem)

    public static let fields = ObjectSchema([
        required("tag", .text(maxLength: 64)),
        optional("title", .text()),
        required("message", .text()),
        optional("progress", .integer(0...Int(Int32.max))),
        optional("progress_max", .integer(1...Int(Int32.max))),
        optional("chronometer", .boolean),
        optional("when", .number(0...1e12)),
        optional("critical_text", .text()),
        optional("silent", .boolean),
        optional("background_color", color),
        optional("text_color", color),
        optional("progress_bar_color", color),
    ], checks: [{ object, path in
        guard let progress = object["progress"]?.intValue else { return [] }
        let maximum = object["progress_max"]?.intValue ?? 100
        return progress <= maximum ? [] : [PayloadIssue(path: joinedPath(path, "progress"), "\(progress) is more than progress_max \(maximum)")]
    }])

    /// The `call_service` data for `notify.<service>`.
    public static func serviceData(_ fields: [String: JSONValue], ending: Bool) -> JSONValue {
        guard !ending else {
            return ["message": "clear_notification", "data": ["tag": fields["tag"] ?? .null]]
        }
        var data: [String: JSONValue] = ["live_update": true]
        for (key, value) in fields where key != "title" && key != "message" { data[key] = value }
        var body: [String: JSONValue] = ["message": fields["message"] ?? "", "data": .object(data)]
        if let title = fields["title"] { body["title"] = title }
        return .object(body)
    }
}
