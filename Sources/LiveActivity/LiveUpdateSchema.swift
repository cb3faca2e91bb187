import JSON

/// Home Assistant's own Live Activities through the companion app: the fields a rule gives,
/// sent as `notify.mobile_app_…` with `data.live_update: true` and ended with `clear_notification`.
public enum LiveUpdateSchema {
    static let color = FieldSchema.custom(name: "a colour", check: CSSColor.problem)

    static let tag = FieldSchema.custom(name: "a tag", check: tagProblem)

    /// The companion app keys an activity by its tag: 1–64 of A–Z, a–z, 0–9, `_` and `-`.
    public static func tagProblem(_ text: String) -> String? {
        guard !text.isEmpty, text.unicodeScalars.count <= 64 else { return "\(BackendKind.shown(text)) is not 1 to 64 characters" }
        let bad = text.unicodeScalars.first { !BackendKind.isSlugScalar($0) }
        return bad.map { "\(BackendKind.shown(text)) holds \(BackendKind.shown(String($0))); a tag is letters, digits, _ and -" }
    }

    /// A notify service of the companion app: `notify.` and a lower-case name of letters, digits and `_`.
    public static func serviceProblem(_ service: String) -> String? {
        let name: [UInt8] = service.hasPrefix("notify.") ? Array(service.utf8.dropFirst(7)) : []
        let isNameByte: (UInt8) -> Bool = { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        guard (1...255).contains(name.count), name.first != 95, name.last != 95, name.allSatisfy(isNameByte) else {
            return "\(BackendKind.shown(service)) is not a notify service; write notify.mobile_app_<device>"
        }
        return nil
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
