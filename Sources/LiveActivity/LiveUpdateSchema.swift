import JSON

/// Home Assistant's own Live Activities through the companion app: the fields a rule gives,
/// sent as `notify.mobile_app_…` with `data.live_update: true` and ended with `clear_notification`.
public enum LiveUpdateSchema {
    static let color = FieldSchema.custom(name: "a colour", check: CSSColor.problem)

    /// The companion app keys an activity by its tag: 1–64 of A–Z, a–z, 0–9, `_` and `-`.
    static let tag = FieldSchema.custom(name: "a tag") { text in
        guard !text.isEmpty, text.count <= 64 else { return "\"\(text)\" is not 1 to 64 characters" }
        let bad = text.unicodeScalars.first { !(("a"..."z").contains($0) || ("A"..."Z").contains($0)
                                               || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
        return bad.map { "\"\(text)\" holds \"\($0)\"; a tag is letters, digits, _ and -" }
    }

    /// An icon the app draws in the notification: a Material Design Icon, `mdi:…`.
    static let notificationIcon = FieldSchema.custom(name: "an icon") { text in
        text.hasPrefix("mdi:") && text.count > 4 ? nil : "\"\(text)\" is not an mdi: icon (e.g. mdi:washing-machine)"
    }

    public static let fields = ObjectSchema([
        required("tag", tag),
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
        optional("url", .url),
        optional("notification_icon", notificationIcon),
        optional("notification_icon_color", color),
        optional("progress_bar_direction", .choice(name: "direction", ["increasing", "decreasing"])),
        optional("when_relative", .boolean),
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
