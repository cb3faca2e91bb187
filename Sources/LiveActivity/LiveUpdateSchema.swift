public import JSON
import Platform

/// Home Assistant's own Live Activities through the companion app: the fields a rule gives, sent as
/// `notify.mobile_app_…` with `data.live_update: true`, and ended in one push: `clear_notification` carrying the final
/// content (`data.content_state`) and when the Lock Screen lets it go (`data.dismissal_date`). Core forwards `data` as
/// given to the push relay (home-assistant/mobile-apps-fcm-push, live-activity.js), which reads only the keys here.
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
        // When the phone shows the content as out of date (epoch seconds); LiveBridge sets one when none is given.
        optional("stale_date", .number(0...1e12)),
        // Which of several activities iOS puts first (0–1).
        optional("relevance_score", .number(0...1)),
        // An alert with the push (the Lock Screen lights up), and its sound.
        optional("alert", .text()),
        optional("alert_sound", .text()),
    ], checks: [{ object, path in
        guard let progress = object["progress"]?.intValue else { return [] }
        let maximum = object["progress_max"]?.intValue ?? 100
        return progress <= maximum ? [] : [PayloadIssue(path: joinedPath(path, "progress"), "\(progress) is more than progress_max \(maximum)")]
    }])

    /// The relay's content-state keys for the fields that have another name there.
    static let contentStateKeys: [String: String] = [
        "title": "title", "message": "message", "critical_text": "critical_text", "progress": "progress",
        "progress_max": "progress_max", "chronometer": "chronometer", "notification_icon": "icon",
        "notification_icon_color": "color", "background_color": "background_color", "text_color": "text_color",
        "progress_bar_color": "progress_bar_color", "progress_bar_direction": "progress_bar_direction", "url": "url",
    ]

    /// The end, in one push: `clear_notification` for the tag, the final content as the relay's `content_state`
    /// (a countdown's `when` as `countdown_end`, absolute), kept on the Lock Screen until `dismissalDate` (epoch
    /// seconds). Never `silent` (an end goes at APNs' immediate priority), no top-level title (the relay would make it
    /// an alert). Without a token core sends the plain clear command instead, which removes the activity at once.
    public static func endData(_ fields: [String: JSONValue], dismissalDate: Int, now: Double) -> JSONValue {
        var state: [String: JSONValue] = [:]
        for (key, value) in fields {
            if let name = contentStateKeys[key] { state[name] = value }
        }
        if let when = fields["when"]?.doubleValue {
            state["countdown_end"] = .int(Int(saturating: fields["when_relative"]?.boolValue == true ? now + when : when))
        }
        var data: [String: JSONValue] = ["tag": fields["tag"] ?? .null, "dismissal_date": .int(dismissalDate)]
        if !state.isEmpty { data["content_state"] = .object(state) }
        for key in ["relevance_score", "alert", "alert_sound"] { if let value = fields[key] { data[key] = value } }
        return ["message": "clear_notification", "data": .object(data)]
    }

    /// The `call_service` data for `notify.<service>`: a start or an update.
    public static func serviceData(_ fields: [String: JSONValue]) -> JSONValue {
        var data: [String: JSONValue] = ["live_update": true]
        for (key, value) in fields where key != "title" && key != "message" { data[key] = value }
        var body: [String: JSONValue] = ["message": fields["message"] ?? "", "data": .object(data)]
        if let title = fields["title"] { body["title"] = title }
        return .object(body)
    }
}

extension BackendKind {
    public static let homeassistant = BackendKind(named: "homeassistant")
}

extension LiveUpdateSchema: PushService {
    /// Home Assistant's own Live Activities: a push before core has the activity's token (about ten seconds after a
    /// start) opens a second activity, hence its settle.
    public static let definition = BackendDefinition(
        kind: .homeassistant, name: "Home Assistant", idKey: "tag", idProblem: LiveUpdateSchema.tagProblem,
        methods: ["call_service"], idPath: nil, otherTarget: LiveUpdateSchema.serviceProblem,
        configKeys: ["type", "service"], needsToken: false, templates: ["live_update", "progress", "generic"],
        defaultDismissAfter: BackendDefinition.lockScreenDismissAfter, defaultSettle: UpdateBudget.homeAssistantSettle, requestsPerMinute: nil,
        baseURL: nil, spendsRelay: true, contentShare: .none,
        movingParts: movingParts)

    /// Its bar (`progress` of `progress_max`, 100 when not given) and its timer's instant (`when`).
    static func movingParts(_ body: inout JSONValue) -> PayloadMeasure.MovingParts {
        var parts = PayloadMeasure.MovingParts()
        guard case .object(var object) = body, case .object(var data)? = object["data"] else { return parts }
        if let value = data["progress"]?.doubleValue {
            let maximum = data["progress_max"]?.doubleValue ?? 100
            parts.progress = maximum > 0 ? value / maximum : nil
            data["progress"] = .null
        }
        if let when = data["when"]?.doubleValue {
            parts.times.append(when)
            data["when"] = .null
        }
        object["data"] = .object(data)
        body = .object(object)
        return parts
    }
}

extension BackendRequest {
    /// Home Assistant: the live update's fields as a call of the notify `service` (`notify.notify` when none is named).
    /// The end is one push: `clear_notification` with the final content, shown until `dismissAfter` from `now`
    /// (zero: dismissed at once). Nothing is left pending.
    public static func homeAssistant(backend: String, service: String?, fields: [String: JSONValue], kind: PushKind,
                                     dismissAfter: Duration, now: Double) -> BackendRequest {
        let target = service ?? "notify.notify"
        let body = kind == .end
            ? LiveUpdateSchema.endData(fields, dismissalDate: Int(saturating: now) + Int(dismissAfter.components.seconds), now: now)
            : LiveUpdateSchema.serviceData(fields)
        var request = BackendRequest(backend: backend, kind: .homeassistant, method: "call_service", target: target, body: body)
        if kind == .end { request.dismissalWindow = dismissAfter }
        return request
    }
}
