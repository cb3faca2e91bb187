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
