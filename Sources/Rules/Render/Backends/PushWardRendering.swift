import JSON
import LiveActivity
import Platform
import Templates

/// PushWard: its templates, and Aivi's progress (→ generic) and monitor (→ board), Aivi's generic when the rule also
/// goes elsewhere; `PATCH /activities/{slug}` after the activity's creation.
struct PushWardRendering: BackendRendering {
    var drawsMDIIcons: Bool { true }
    var ruleKeys: Set<String> { ["dismiss_after", "priority", "sound", "stale_ttl", "ended_ttl", "dismissal_ttl"] }

    /// PushWard's per-activity settings: priority (which 5 of its activities stay when more are ongoing), the sound of
    /// the start and end, how long it stays stale and once ended (server-side), and how long the ended activity stays
    /// on the Lock Screen (`dismissal_ttl`, at most 4 h: iOS's ceiling).
    struct Options: Sendable, Equatable {
        var priority: Int?
        var sound: String?
        var staleTTL: Duration?
        var endedTTL: Duration?
        var dismissalTTL: Duration?
    }

    /// PushWard's options of an activity: its priority (0–10), the sound of its start and end, how long it stays
    /// stale and once ended.
    func ruleOptions(_ reader: MappingReader, path: String, errors: inout [ConfigError]) -> (any Sendable)? {
        var options = Options()
        if let node = reader["priority"] {
            if let text = node.scalar, let value = Int(text), PushWardSchema.priorities.contains(value) { options.priority = value } else {
                errors.append(ConfigError(node.location, path: path + ".priority", "\(node.quoted) is not a priority from 0 to 10"))
            }
        }
        if let sound = reader.string("sound", errors: &errors) {
            if PushWardSchema.sounds.contains(sound) { options.sound = sound } else {
                errors.append(ConfigError(reader["sound"]!.location, path: path + ".sound", "unknown sound \"\(sound)\""
                    + Suggestion.didYouMean(sound, in: PushWardSchema.sounds, otherwise: "; PushWard has " + PushWardSchema.sounds.joined(separator: ", "))))
            }
        }
        options.staleTTL = reader.duration("stale_ttl", errors: &errors)
        options.endedTTL = reader.duration("ended_ttl", errors: &errors)
        if let ttl = reader.duration("dismissal_ttl", errors: &errors) {
            if ttl <= .seconds(PushWardSchema.dismissalTTLMax) { options.dismissalTTL = ttl } else {
                errors.append(ConfigError(reader["dismissal_ttl"]!.location, path: path + ".dismissal_ttl",
                                          "\(reader["dismissal_ttl"]!.quoted) is longer than 4h, the longest iOS keeps an ended Live Activity"))
            }
        }
        return options
    }

    func schema(template: String) -> ObjectSchema? {
        PushWardSchema.schema(template)?.removing(["template"], keepingChecks: true)
    }

    func resolve(template: String, reader: MappingReader, others: Set<BackendKind>) -> (ObjectSchema?, PayloadMapping) {
        switch template {
        case "progress", "monitor": return (TemplateCatalog.aivi(template), .fromAivi(template))
        // One set of fields serves all: Aivi's generic, when the rule also targets another service.
        case "generic" where !others.isEmpty: return (TemplateCatalog.aivi("generic"), .fromAivi("generic"))
        default: return (schema(template: template), .native)
        }
    }

    func mappingNote(template: String) -> String {
        template == "monitor"
            ? "PushWard's board: each column a tile (header as label, value as value cut to 16 characters, a time_until/time_since value as the time left or passed), the footers as subtitle"
            : "PushWard's generic: the bar as progress, the main text as state, the footer as subtitle, tap_url as the tap action"
    }

    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
        let now = context.now
        return self.fields(fields, of: rule, at: target, templateKey: "template") { PushWardMapping.map(template: $0, $1, now: now) }.flatMap { content in
            let (normalized, issues) = PayloadNormalizer.normalize(.object(content), as: PushWardSchema.content)
            guard issues.isEmpty, let normalized else { return .failure(PayloadIssuesError(issues)) }
            // PushWard ends a countdown itself at its end_date: a completion frame after that would revive it for
            // dismiss_after, so such an end is `ended` at once.
            let serverEnded = normalized["template"] == "countdown" && (normalized["end_date"]?.doubleValue ?? .infinity) <= now
            return checkedSize(Self.request(rule, target, content: normalized, phase: phase,
                                            dismissAfter: serverEnded ? .zero : rule.dismissAfter(for: .pushward)))
        }
    }

    /// The PushWard request for this content, with the activity's creation (name, priority, time to live).
    static func request(_ rule: ActivityRule, _ target: ActivityTarget, content: JSONValue, phase: PushKind, dismissAfter: Duration) -> BackendRequest {
        let options = rule.options[.pushward] as? Options ?? Options()
        var creation: [String: JSONValue] = ["slug": .string(target.id), "name": .string(rule.id), "priority": .int(options.priority ?? 1)]
        if let ttl = options.endedTTL { creation["ended_ttl"] = .int(Int(ttl.components.seconds)) }
        if let ttl = options.staleTTL { creation["stale_ttl"] = .int(Int(ttl.components.seconds)) }
        return .pushWard(backend: target.backend.name, slug: target.id, kind: phase, content: content, priority: options.priority,
                         sound: options.sound, creation: .object(creation), dismissAfter: dismissAfter,
                         dismissalTTL: options.dismissalTTL.map { Int($0.components.seconds) })
    }

    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
        Self.request(rule, target, content: last?.body["content"] ?? ["template": "generic", "progress": 1], phase: .end, dismissAfter: .zero)
    }

    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest {
        Self.request(rule, target, content: start.body["content"] ?? .null, phase: .end, dismissAfter: .zero)
    }

    /// A blueprint event's request(s): the payload as written for this service, checked against its schema.
    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
        var content = payload
        if action == .end && content.isEmpty { content = ["template": "generic", "progress": 1] }
        let (normalized, problems) = PayloadNormalizer.normalize(.object(content), as: PushWardSchema.content, path: "payload")
        guard problems.isEmpty, let normalized else { return .failure(PayloadIssuesError(problems)) }
        return .success([(backend.name, .pushWard(backend: backend.name, slug: activity, kind: action == .end ? .end : .update, content: normalized, priority: nil,
                            sound: nil, creation: ["slug": .string(activity), "name": .string(activity), "priority": 1], dismissAfter: .zero))])
    }
}

extension PushWardSchema: RenderedService {
    static let rendering: any BackendRendering = PushWardRendering()
}

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
