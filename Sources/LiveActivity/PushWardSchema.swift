import Platform
public import JSON

/// PushWard's activity content (`PATCH /activities/{slug}`: `{state, content, priority?, sound?}`), from its public
/// contract as its Home Assistant integration states it (mac-lucky/pushward-hass: `const.py`, `content_mapper.py`,
/// `tests/server_contract.py`): the templates LiveBridge sends and their fields, limits and required fields.
/// The media template is taken without its transport controls (which call back webhooks LiveBridge does not serve).
public enum PushWardSchema {
    public static let templates = ["generic", "countdown", "steps", "alert", "gauge", "timeline", "board", "log", "media"]
    public static let states = ["ongoing", "ended"]
    public static let sounds = ["default", "chime", "alert", "success", "warning", "bell", "ding", "buzz", "notification"]
    public static let severities = ["critical", "warning", "info"]
    /// The colours PushWard names; anything else is `#RRGGBB` or `#RRGGBBAA`.
    public static let colours: Set<String> = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "indigo", "teal", "cyan", "mint", "brown"]
    public static let priorities = 0...10
    /// The longest an ended activity stays on the Lock Screen, in seconds (iOS's four hours).
    public static let dismissalTTLMax = 14_400

    /// A slug as PushWard takes it: a letter or digit, then letters, digits, `_` and `-`, 128 at most.
    public static func slugProblem(_ slug: String) -> String? {
        guard (1...128).contains(slug.count), let first = slug.unicodeScalars.first, isAlphanumeric(first),
              slug.unicodeScalars.allSatisfy({ isAlphanumeric($0) || $0 == "_" || $0 == "-" }) else {
            return "\(OutsideText.quoted(slug)) is not a PushWard slug: a letter or digit, then letters, digits, _ and -, at most 128"
        }
        return nil
    }

    private static func isAlphanumeric(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) }

    static func colourProblem(_ text: String) -> String? {
        if colours.contains(text.lowercased()) { return nil }
        let hex = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        if [6, 8].contains(hex.count), hex.allSatisfy(\.isHexDigit) { return nil }
        return "\"\(text)\" is not a PushWard colour: " + colours.sorted().joined(separator: ", ") + ", or #RRGGBB / #RRGGBBAA"
    }

    static let colour = FieldSchema.custom(name: "a colour", check: colourProblem)
    /// Seconds since 1970, as PushWard's dates are.
    static let epoch = FieldSchema.integer(1...253_402_300_799)

    static let tapAction = ObjectSchema([
        required("url", .url), optional("foreground", .boolean), optional("title", .text(maxLength: 64)),
    ], shorthand: "url")

    /// Fields every template takes.
    static let common: [ObjectSchema.Field] = [
        required("template", .choice(name: "template", templates)),
        optional("progress", .number(0...1)),
        optional("state", .text(maxLength: 256)),
        optional("subtitle", .text(maxLength: 256)),
        optional("icon", .text(maxLength: 128)),
        optional("accent_color", colour),
        optional("background_color", colour),
        optional("text_color", colour),
        optional("remaining_time", .integer(0...Int.max)),
        optional("tap_action", .object(tapAction)),
    ]

    /// `live_progress` animates the bar towards `end_date` on the phone: its document says it requires one.
    public static let generic = ObjectSchema(common + [optional("live_progress", .boolean), optional("end_date", epoch)], checks: [{ object, path in
        object["live_progress"] == .bool(true) && object["end_date"] == nil
            ? [PayloadIssue(path: joinedPath(path, "live_progress"), "needs end_date (PushWard animates the bar towards it)")] : []
    }])
    public static let countdown = ObjectSchema(common + [
        required("end_date", epoch), optional("start_date", epoch), optional("completion_message", .text(maxLength: 512)),
        optional("warning_threshold", .integer(0...86_400)), optional("alarm", .boolean),
    ], checks: [{ object, path in
        guard let start = object["start_date"]?.doubleValue, let end = object["end_date"]?.doubleValue, start >= end else { return [] }
        return [PayloadIssue(path: joinedPath(path, "start_date"), "must be before end_date")]
    }])
    public static let steps = ObjectSchema(common + [
        required("total_steps", .integer(1...64)), required("current_step", .integer(0...64)),
        optional("step_labels", .list(.text(maxLength: 32), count: 1...64)),
    ], checks: [{ object, path in
        var issues: [PayloadIssue] = []
        if let total = object["total_steps"]?.intValue, let current = object["current_step"]?.intValue, current > total {
            issues.append(PayloadIssue(path: joinedPath(path, "current_step"), "\(current) is past total_steps (\(total))"))
        }
        if let total = object["total_steps"]?.intValue, let labels = object["step_labels"]?.arrayValue, labels.count != total {
            issues.append(PayloadIssue(path: joinedPath(path, "step_labels"), "has \(labels.count) labels for \(total) steps"))
        }
        return issues
    }])
    public static let alert = ObjectSchema(common + [
        required("severity", .choice(name: "severity", severities)), optional("severity_label", .text(maxLength: 32)), optional("fired_at", epoch),
    ])
    public static let gauge = ObjectSchema(common + [
        required("value", .number(-1e12...1e12)), required("min_value", .number(-1e12...1e12)), required("max_value", .number(-1e12...1e12)),
        optional("unit", .text(maxLength: 32)),
    ], checks: [{ object, path in
        guard let low = object["min_value"]?.doubleValue, let high = object["max_value"]?.doubleValue else { return [] }
        guard low < high else { return [PayloadIssue(path: joinedPath(path, "min_value"), "must be below max_value")] }
        if let value = object["value"]?.doubleValue, !(low...high).contains(value) {
            return [PayloadIssue(path: joinedPath(path, "value"), "\(value) is outside \(low)…\(high)")]
        }
        return []
    }])

    static let threshold = ObjectSchema([required("value", .number(-1e12...1e12)), optional("color", colour), optional("label", .text(maxLength: 12))])
    static let historyPoint = ObjectSchema([required("timestamp", epoch), required("value", .number(-1e12...1e12))])

    /// Up to ten labelled series (`value: {CPU: 72.5}`), drawn as a sparkline; `units` and `history` keyed by series.
    public static let timeline = ObjectSchema(common + [
        required("value", .map(.number(-1e12...1e12), keyMaxLength: 32, count: 1...10)),
        optional("primary_series", .text(maxLength: 32)),
        optional("unit", .text(maxLength: 32)),
        optional("units", .map(.text(maxLength: 32), keyMaxLength: 32, count: 0...10)),
        optional("scale", .choice(name: "scale", ["linear", "logarithmic"])),
        optional("decimals", .integer(0...10)),
        optional("thresholds", .list(.object(threshold), count: 0...5)),
        optional("history", .map(.list(.object(historyPoint), count: 0...500), keyMaxLength: 32, count: 0...10)),
    ], checks: [{ object, path in
        guard let series = object["value"]?.objectValue else { return [] }
        var issues: [PayloadIssue] = []
        for key in (object["units"]?.objectValue?.keys).map(Array.init) ?? [] where series[key] == nil {
            issues.append(PayloadIssue(path: joinedPath(path, "units." + key), "names no series of value (\(series.keys.sorted().joined(separator: ", ")))"))
        }
        if let primary = object["primary_series"]?.stringValue, series[primary] == nil {
            issues.append(PayloadIssue(path: joinedPath(path, "primary_series"), "\"\(primary)\" names no series of value (\(series.keys.sorted().joined(separator: ", ")))"))
        }
        return issues
    }])

    /// A tile of a board: its value is text on PushWard's side (a number is written as text).
    static let tile = ObjectSchema([
        required("label", .text(maxLength: 32)), required("value", .text(maxLength: 16)), optional("unit", .text(maxLength: 8)),
        optional("icon", .text(maxLength: 128)), optional("color", colour), optional("trend", .choice(name: "trend", ["up", "down", "flat"])),
    ])
    /// One to four tiles of figures side by side.
    public static let board = ObjectSchema(common + [required("tiles", .list(.object(tile), count: 1...4))])

    static let logLine = ObjectSchema([
        required("text", .text(maxLength: 512)), optional("at", epoch), optional("level", .choice(name: "level", ["info", "warn", "error"])),
    ], shorthand: "text", checks: [{ object, path in
        // Its document: a line's text is at least one character.
        object["text"]?.stringValue?.isEmpty == true ? [PayloadIssue(path: joinedPath(path, "text"), "is empty; PushWard refuses an empty log line")] : []
    }])
    /// The latest lines of a log, newest first (its document's order: write them so); PushWard keeps the backlog itself.
    public static let log = ObjectSchema(common + [required("lines", .list(.object(logLine), count: 1...20))])

    public static let playbackStates = ["playing", "paused", "stopped", "buffering"]
    /// What is playing and where the playhead is (`position_seconds` sampled at `position_at`); no transport controls.
    public static let media = ObjectSchema(common + [
        optional("media_title", .text(maxLength: 128)), optional("playback_state", .choice(name: "playback state", playbackStates)),
        optional("position_seconds", .number(0...604_800)), optional("duration_seconds", .number(1...604_800)),
        optional("position_at", epoch), optional("volume", .number(0...1)), optional("favorite", .boolean),
    ], checks: [{ object, path in
        guard let position = object["position_seconds"]?.doubleValue, let duration = object["duration_seconds"]?.doubleValue, position > duration else { return [] }
        return [PayloadIssue(path: joinedPath(path, "position_seconds"), "\(PayloadNormalizer.format(position)) is past duration_seconds (\(PayloadNormalizer.format(duration)))")]
    }])

    static let byName: [String: ObjectSchema] = ["generic": generic, "countdown": countdown, "steps": steps, "alert": alert, "gauge": gauge,
                                                 "timeline": timeline, "board": board, "log": log, "media": media]
    public static let content = FieldSchema.tagged(key: "template", byName)

    public static func schema(_ template: String) -> ObjectSchema? { byName[template] }

    /// Every content field LiveBridge may send, in any template (not `template` itself): what a frame that starts over
    /// clears with null when it does not set it (PATCH is a merge patch and PushWard keeps an ended activity's content).
    public static let contentFieldNames: [String] = Set(byName.values.flatMap(\.names)).subtracting(["template"]).sorted()
}

extension BackendKind {
    public static let pushward = BackendKind(named: "pushward")
}

extension PushWardSchema: PushService {
    /// PushWard: 200 requests a minute per address; its two-phase end shows the final content briefly (5 s) before
    /// `ended`, whose own `dismissal_ttl` keeps it on the Lock Screen.
    public static let definition = BackendDefinition(
        kind: .pushward, name: "PushWard", idKey: "slug", idProblem: PushWardSchema.slugProblem,
        methods: ["PATCH"], idPath: "/activities/", otherTarget: nil,
        configKeys: ["type", "token", "base_url"], needsToken: true, templates: PushWardSchema.templates + ["progress", "monitor"],
        defaultDismissAfter: .seconds(5), defaultSettle: .zero, requestsPerMinute: 200,
        baseURL: "https://api.pushward.app", spendsRelay: false, contentShare: .bodyLessWrapper,
        // Its countdown counts to end_date, its generic's live progress too.
        movingParts: { PayloadMeasure.contentParts(&$0, timeKey: "end_date") },
        codes: [
            ServiceCode("quota.exceeded", .allowanceSpent,
                        explanation: "the plan's monthly updates are used up: pushes resume when the quota resets next month",
                        limitReason: "the plan's monthly updates are used up (quota.exceeded): pushes resume when the quota resets next month"),
            ServiceCode("activity.not_found", .activityGone, explanation: "PushWard ended and removed it; it starts again at the next start"),
            ServiceCode("integration_key.slug_invalid", .keyRestricted,
                        explanation: "the key is restricted to other activity slugs; allow this one in PushWard or use another key"),
            // A create refused with a plain 403 (no code): the key lacks the activity:manage scope.
            ServiceCode("forbidden", .permissionMissing, explanation: "the key needs the activity:manage scope to create activities"),
        ],
        // Its 200 requests a minute are per client address, whatever the key.
        allowanceCountedBy: .address)
}

extension BackendRequest {
    /// PushWard: `PATCH /activities/{slug}` with `{state?, content, priority?, sound?}`. A start also creates the
    /// activity (`creation`, upserted) and says `ongoing`; an update says no state, so PushWard keeps the one it has:
    /// an activity it ended itself (a countdown's end, `stale_ttl`) or evicted stays so, never started again by an
    /// update. An end with `dismissAfter` above zero is PushWard's two-phase end: the final content (no state), then
    /// `ended` that long after; otherwise it is `ended` at once. `dismissalTTL`: how many seconds the ended activity
    /// stays on the Lock Screen (sent with `ended`).
    public static func pushWard(backend: String, slug: String, kind: PushKind, content: JSONValue, priority: Int?, sound: String?,
                                creation: JSONValue, dismissAfter: Duration, dismissalTTL: Int? = nil) -> BackendRequest {
        func body(_ state: String?) -> JSONValue {
            var object: [String: JSONValue] = ["content": content]
            if let state { object["state"] = .string(state) }
            if state == "ended", let dismissalTTL { object["dismissal_ttl"] = .int(dismissalTTL) }
            if let priority { object["priority"] = .int(priority) }
            if let sound, kind != .update { object["sound"] = .string(sound) }
            return .object(object)
        }
        let twoPhase = kind == .end && dismissAfter > .zero
        var request = BackendRequest(backend: backend, kind: .pushward, method: "PATCH", target: "/activities/\(slug)",
                                     body: body(kind == .start ? "ongoing" : kind == .end && !twoPhase ? "ended" : nil))
        request.creation = creation
        if twoPhase { request.dismissal = Dismissal(target: "/activities/\(slug)", body: body("ended"), after: dismissAfter) }
        return request
    }
}
