import JSON

/// PushWard's activity content (`PATCH /activities/{slug}`: `{state, content, priority?, sound?}`), from its public
/// contract as its Home Assistant integration states it (mac-lucky/pushward-hass: `const.py`, `content_mapper.py`,
/// `tests/server_contract.py`): the templates LiveBridge sends and their fields, limits and required fields.
/// PushWard's timeline, board, log and media templates are not taken yet.
public enum PushWardSchema {
    public static let templates = ["generic", "countdown", "steps", "alert", "gauge"]
    public static let states = ["ongoing", "ended"]
    public static let sounds = ["default", "chime", "alert", "success", "warning", "bell", "ding", "buzz", "notification"]
    public static let severities = ["critical", "warning", "info"]
    /// The colours PushWard names; anything else is `#RRGGBB` or `#RRGGBBAA`.
    public static let colours: Set<String> = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "indigo", "teal", "cyan", "mint", "brown"]
    public static let priorities = 0...10

    /// A slug as PushWard takes it: a letter or digit, then letters, digits, `_` and `-`, 128 at most.
    public static func slugProblem(_ slug: String) -> String? {
        guard (1...128).contains(slug.count), let first = slug.unicodeScalars.first, isAlphanumeric(first),
              slug.unicodeScalars.allSatisfy({ isAlphanumeric($0) || $0 == "_" || $0 == "-" }) else {
            return "\"\(slug)\" is not a PushWard slug: a letter or digit, then letters, digits, _ and -, at most 128"
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
        optional("state", .text(maxLength: 255)),
        optional("subtitle", .text(maxLength: 255)),
        optional("icon", .text(maxLength: 128)),
        optional("accent_color", colour),
        optional("background_color", colour),
        optional("text_color", colour),
        optional("remaining_time", .integer(0...Int.max)),
        optional("tap_action", .object(tapAction)),
    ]

    public static let generic = ObjectSchema(common + [optional("live_progress", .boolean), optional("end_date", epoch)])
    public static let countdown = ObjectSchema(common + [
        required("end_date", epoch), optional("start_date", epoch), optional("completion_message", .text(maxLength: 1024)),
        optional("warning_threshold", .integer(0...86_400)), optional("alarm", .boolean),
    ], checks: [{ object, path in
        guard let start = object["start_date"]?.doubleValue, let end = object["end_date"]?.doubleValue, start >= end else { return [] }
        return [PayloadIssue(path: joinedPath(path, "start_date"), "must be before end_date")]
    }])
    public static let steps = ObjectSchema(common + [
        required("total_steps", .integer(1...20)), required("current_step", .integer(0...20)),
        optional("step_labels", .list(.text(maxLength: 32), count: 1...20)),
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

    public static let content = FieldSchema.tagged(key: "template", ["generic": generic, "countdown": countdown, "steps": steps, "alert": alert, "gauge": gauge])

    public static func schema(_ template: String) -> ObjectSchema? {
        switch template {
        case "generic": return generic
        case "countdown": return countdown
        case "steps": return steps
        case "alert": return alert
        case "gauge": return gauge
        default: return nil
        }
    }
}
