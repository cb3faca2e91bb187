import Platform
public import JSON

/// ActivitySmith's managed Live Activity streams (activitysmith.com; its OpenAPI document as its SDKs ship it,
/// ActivitySmithHQ/activitysmith-python `StreamContentState`): `PUT /live-activity/stream/{key}` with
/// `{content_state, channels?}` starts, updates or rotates the activity behind a stable key (answering
/// started/updated/rotated/noop/paused); `DELETE` the same path with a final `content_state` ends it, dismissed
/// after `auto_dismiss_seconds`. The content's `type` decides its fields.
public enum ActivitySmithSchema {
    public static let types = ["progress", "segmented_progress", "metrics", "stats", "alert", "timer"]
    public static let colours = ["lime", "green", "cyan", "blue", "purple", "magenta", "red", "orange", "yellow", "gray"]

    /// A stream key: letters, digits, `_` and `-` (1–255, its document's `maxLength`).
    public static func streamKeyProblem(_ key: String) -> String? {
        guard (1...255).contains(key.count), key.unicodeScalars.allSatisfy({ c in
            ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
        }) else { return "\(OutsideText.quoted(key)) is not an ActivitySmith stream key: letters, digits, _ and -, at most 255" }
        return nil
    }

    static let colour = FieldSchema.choice(name: "colour", colours)
    static let metric = ObjectSchema([
        required("label", .text(maxLength: 64)), required("value", .text(maxLength: 64)), optional("unit", .text(maxLength: 16)), optional("color", colour),
    ], checks: [{ object, path in
        // Its document: label and a text value at least one character.
        ["label", "value"].compactMap { key in
            object[key]?.stringValue?.isEmpty == true ? PayloadIssue(path: joinedPath(path, key), "is empty; ActivitySmith refuses an empty metric \(key)") : nil
        }
    }])

    static let common: [ObjectSchema.Field] = [
        required("type", .choice(name: "type", types)),
        required("title", .text(maxLength: 256)),
        optional("subtitle", .text(maxLength: 256)),
        optional("color", colour),
    ]

    public static let progress = ObjectSchema(common + [
        optional("percentage", .number(0...100)), optional("value", .number(-1e12...1e12)), optional("upper_limit", .number(-1e12...1e12)),
    ], checks: [{ object, path in
        // Its document: value and upper_limit come together (dependentRequired), upper_limit above 0; with neither, a
        // percentage.
        let value = object["value"]?.doubleValue, limit = object["upper_limit"]?.doubleValue
        switch (value, limit) {
        case (nil, nil):
            return object["percentage"] == nil ? [PayloadIssue(path: joinedPath(path, "percentage"), "is required (or value and upper_limit)")] : []
        case (_?, nil): return [PayloadIssue(path: joinedPath(path, "upper_limit"), "is required with value")]
        case (nil, _?): return [PayloadIssue(path: joinedPath(path, "value"), "is required with upper_limit")]
        case let (value?, limit?):
            if limit <= 0 { return [PayloadIssue(path: joinedPath(path, "upper_limit"), "must be above 0")] }
            return value <= limit ? [] : [PayloadIssue(path: joinedPath(path, "value"), "\(PayloadNormalizer.format(value)) is past upper_limit \(PayloadNormalizer.format(limit))")]
        }
    }])
    public static let segmentedProgress = ObjectSchema(common + [
        required("number_of_steps", .integer(1...64)), required("current_step", .integer(0...64)), optional("step_color", colour),
    ], checks: [{ object, path in
        guard let steps = object["number_of_steps"]?.intValue, let current = object["current_step"]?.intValue, current > steps else { return [] }
        return [PayloadIssue(path: joinedPath(path, "current_step"), "\(current) is past number_of_steps (\(steps))")]
    }])
    public static let metrics = ObjectSchema(common + [required("metrics", .list(.object(metric), count: 1...8))])
    public static let alert = ObjectSchema(common + [required("message", .text())], checks: [{ object, path in
        object["message"]?.stringValue?.isEmpty == true ? [PayloadIssue(path: joinedPath(path, "message"), "is empty; ActivitySmith refuses an empty message")] : []
    }])
    /// A timer the phone runs itself (its changelog of 2026-06-09, app 1.11.0): counting down from `duration_seconds`,
    /// or up from 00:00 with `counts_down: false`. Sending `duration_seconds` again resets it, so a rule gives it only
    /// when the timer should be set.
    public static let timer = ObjectSchema(common + [optional("duration_seconds", .integer(1...604_800)), optional("counts_down", .boolean)],
                                           checks: [{ object, path in
        guard object["counts_down"] != .bool(false), object["duration_seconds"] == nil else { return [] }
        return [PayloadIssue(path: joinedPath(path, "duration_seconds"), "is required for a countdown (or counts_down: false to count up)")]
    }])

    public static let contentState = FieldSchema.tagged(key: "type", [
        "progress": progress, "segmented_progress": segmentedProgress, "metrics": metrics, "stats": metrics, "alert": alert, "timer": timer,
    ])

    public static func schema(_ type: String) -> ObjectSchema? {
        switch type {
        case "progress": return progress
        case "segmented_progress": return segmentedProgress
        case "metrics", "stats": return metrics
        case "alert": return alert
        case "timer": return timer
        default: return nil
        }
    }
}

extension BackendKind {
    public static let activitysmith = BackendKind(named: "activitysmith")
}

extension ActivitySmithSchema: PushService {
    /// ActivitySmith: 60 requests a minute per API key. Its address is assumed from its SDKs (`base_url` overrides it).
    public static let definition = BackendDefinition(
        kind: .activitysmith, name: "ActivitySmith", idKey: "stream_key", idProblem: ActivitySmithSchema.streamKeyProblem,
        methods: ["PUT", "DELETE"], idPath: "/live-activity/stream/", otherTarget: nil,
        configKeys: ["type", "token", "base_url", "channels"], needsToken: true, templates: ActivitySmithSchema.types + ["generic", "monitor"],
        defaultDismissAfter: BackendDefinition.lockScreenDismissAfter, defaultSettle: .zero, requestsPerMinute: 60,
        baseURL: "https://activitysmith.com/api", spendsRelay: false, contentShare: .bodyLessWrapper,
        movingParts: movingParts,
        // Recognised by their statuses (the documents give no code): its fifth Live Activity at once; a stream paused.
        codes: [ServiceCode("live_activity_limit", .tooManyActivities), ServiceCode("paused", .paused)])

    /// Its bar: `percentage`, or `value` of `upper_limit`.
    static func movingParts(_ body: inout JSONValue) -> PayloadMeasure.MovingParts {
        var parts = PayloadMeasure.MovingParts()
        guard case .object(var object) = body, case .object(var state)? = object["content_state"] else { return parts }
        if let percentage = state["percentage"]?.doubleValue {
            parts.progress = percentage / 100
            state["percentage"] = .null
        } else if let value = state["value"]?.doubleValue, let limit = state["upper_limit"]?.doubleValue, limit > 0 {
            parts.progress = value / limit
            state["value"] = .null
        }
        object["content_state"] = .object(state)
        body = .object(object)
        return parts
    }
}

extension BackendRequest {
    /// ActivitySmith: `PUT /live-activity/stream/{key}` with `{content_state, channels?}` to start or update the
    /// stream's activity; the end is `DELETE` of the same path with the final content, dismissed `dismissAfter` later
    /// (`auto_dismiss_seconds`). The DELETE body has no `channels` (its schema refuses unknown keys: a 400), and a
    /// timer's `duration_seconds` goes only with the start (on an update it would restart the timer).
    public static func activitySmith(backend: String, key: String, kind: PushKind, contentState: JSONValue, channels: [String],
                                     dismissAfter: Duration) -> BackendRequest {
        var state = contentState.objectValue ?? [:]
        if kind == .end { state["auto_dismiss_seconds"] = .int(Int(dismissAfter.components.seconds)) }
        if kind != .start, state["type"] == "timer" { state["duration_seconds"] = nil }
        var body: [String: JSONValue] = ["content_state": .object(state)]
        if !channels.isEmpty, kind != .end { body["channels"] = .array(channels.map(JSONValue.string)) }
        return BackendRequest(backend: backend, kind: .activitysmith, method: kind == .end ? "DELETE" : "PUT", target: "/live-activity/stream/\(key)",
                              body: .object(body))
    }
}
