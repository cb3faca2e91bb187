import JSON
import LiveActivity
import Templates

/// PushWard: its templates, and Aivi's progress (→ generic) and monitor (→ board), Aivi's generic when the rule also
/// goes elsewhere; `PATCH /activities/{slug}` after the activity's creation.
struct PushWardRendering: BackendRendering {
    var drawsMDIIcons: Bool { true }
    var ruleKeys: Set<String> { ["dismiss_after", "priority", "sound", "stale_ttl", "ended_ttl", "dismissal_ttl"] }

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
        let options = rule.pushWard
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
