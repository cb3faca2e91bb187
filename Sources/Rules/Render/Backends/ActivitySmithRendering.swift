import JSON
import LiveActivity
import Templates

/// ActivitySmith: its stream types, and Aivi's progress/generic (→ progress) and monitor (→ stats); `PUT` (start,
/// update) and `DELETE` (end) of `/live-activity/stream/{key}`.
struct ActivitySmithRendering: BackendRendering {
    var ruleKeys: Set<String> { ["dismiss_after"] }

    /// `channels`: where a stream goes (none: the API key's scope decides).
    func decodeBackend(_ reader: MappingReader, into backend: inout RulesFile.Backend, errors: inout [ConfigError]) {
        if reader["channels"] != nil { backend.channels = (reader.strings("channels", errors: &errors) ?? []).map(\.0) }
    }

    func schema(template: String) -> ObjectSchema? {
        ActivitySmithSchema.schema(template)?.removing(["type"])
    }

    func resolve(template: String, reader: MappingReader, others: Set<BackendKind>) -> (ObjectSchema?, PayloadMapping) {
        switch template {
        case "progress":
            // ActivitySmith's own progress type, or Aivi's progress (its bar a mapping {style: …}), told apart by the bar.
            if case .mapping? = reader["progress"]?.kind { return (TemplateCatalog.aivi("progress"), .fromAivi("progress")) }
            if !others.isEmpty { return (TemplateCatalog.aivi("progress"), .fromAivi("progress")) }
            return (schema(template: template), .native)
        case "generic", "monitor": return (TemplateCatalog.aivi(template), .fromAivi(template))
        default: return (schema(template: template), .native)
        }
    }

    func mappingNote(template: String) -> String {
        "its \(template == "monitor" ? "stats type: each column a metric" : "progress type: the main text as title, the bar as a percentage")"
    }

    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
        self.fields(fields, of: rule, at: target, templateKey: "type") { ActivitySmithMapping.map(template: $0, $1, title: rule.id) }.flatMap { state in
            let (normalized, issues) = PayloadNormalizer.normalize(.object(state), as: ActivitySmithSchema.contentState)
            guard issues.isEmpty, let normalized else { return .failure(PayloadIssuesError(issues)) }
            return checkedSize(.activitySmith(backend: target.backend.name, key: target.id, kind: phase, contentState: normalized,
                                              channels: target.backend.channels, dismissAfter: rule.dismissAfter(for: .activitysmith)))
        }
    }

    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
        let state = last?.body["content_state"] ?? ["type": "progress", "title": .string(rule.id), "percentage": 100]
        return .activitySmith(backend: target.backend.name, key: target.id, kind: .end, contentState: state, channels: target.backend.channels,
                              dismissAfter: rule.dismissAfter(for: .activitysmith))
    }

    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest {
        .activitySmith(backend: target.backend.name, key: target.id, kind: .end, contentState: start.body["content_state"] ?? .null,
                       channels: target.backend.channels, dismissAfter: .zero)
    }

    /// A blueprint event's request(s): the payload as written for this service, checked against its schema.
    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
        var state = payload
        if action == .end && state.isEmpty { state = ["type": "progress", "title": .string(activity), "percentage": 100] }
        let (normalized, problems) = PayloadNormalizer.normalize(.object(state), as: ActivitySmithSchema.contentState, path: "payload")
        guard problems.isEmpty, let normalized else { return .failure(PayloadIssuesError(problems)) }
        return .success([(backend.name, .activitySmith(backend: backend.name, key: activity, kind: action == .end ? .end : .update, contentState: normalized,
                                 channels: backend.channels, dismissAfter: .zero))])
    }
}

extension ActivitySmithSchema: RenderedService {
    static let rendering: any BackendRendering = ActivitySmithRendering()
}

/// Aivi templates shown as ActivitySmith streams: progress and generic as its `progress` type (the main text as the
/// title, the footer or the right-hand text as the subtitle, the bar as a percentage), monitor as `stats` (each column
/// a metric, its header the label).
enum ActivitySmithMapping {
    static func map(template: String, _ content: [String: JSONValue], title fallback: String) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        func percent(_ fraction: JSONValue?) -> JSONValue? {
            fraction?.doubleValue.map { .double((min(max($0, 0), 1) * 1000).rounded() / 10) }
        }
        switch template {
        case "monitor":
            out["type"] = "stats"
            let columns = ["left_column", "right_column"].compactMap { content[$0] }
            out["metrics"] = .array(columns.compactMap { column in
                guard let value = column["value"]?["value"] ?? column["value"] else { return nil }
                return ["label": column["header"] ?? column["footer"] ?? "Value", "value": .string(value.stringValue ?? value.jsonText)]
            })
            out["title"] = .string(fallback)
        case "progress":
            out["type"] = "progress"
            out["title"] = content["header_left"]?["value"] ?? .string(fallback)
            out["subtitle"] = content["footer_left"]?["value"] ?? content["header_right"].flatMap { $0["formatter"] == nil ? $0["value"] : nil }
            out["percentage"] = percent(content["progress"]?["value"])
            if let colour = content["progress"]?["color"]?.stringValue, ActivitySmithSchema.colours.contains(colour) { out["color"] = .string(colour) }
        default:  // generic
            out["type"] = "progress"
            out["title"] = content["state"] ?? .string(fallback)
            out["percentage"] = percent(content["progress"])
        }
        return out.filter { $0.value != .null }
    }
}
