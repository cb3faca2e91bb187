import JSON
import LiveActivity
import Platform
import Templates

/// Island Pulse: its layouts (`default`, `progress`, `score`, `sports`), and Aivi's monitor (columns → sports A/B)
/// or progress/generic (→ the progress layout); `POST /notify` with the job's whole body.
struct IslandPulseRendering: BackendRendering {
    var statuses: [String]? { IslandPulseSchema.statuses }
    var ruleKeys: Set<String> { ["status"] }

    /// A layout's fields as a rule gives them: LiveBridge fills in job_id, action, layout and status.
    static let layoutFields = IslandPulseSchema.body.removing(["job_id", "action", "layout", "status"])

    /// Its per-layout limits on fixed text, at its line and column (a layout written as such).
    func check(_ reader: MappingReader, template layout: String, mapping: PayloadMapping, path: String, errors: inout [ConfigError]) {
        guard mapping == .native else { return }
        for (field, limit) in (IslandPulseSchema.limits[layout] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let node = reader[field], let text = node.scalar, !FieldCompiler.isTemplate(text), text.count > limit else { continue }
            errors.append(ConfigError(node.location, path: joinedPath(path, field), "\(node.quoted) is \(text.count) characters; the \(layout) layout shows at most \(limit)"))
        }
    }

    /// The free tier shows the default layout only, one job at a time.
    func notes(_ rule: ActivityRule, _ target: ActivityTarget, at: SourceLocation, path: String, into notes: inout RuleNotes) {
        guard target.backend.freeTier else { return }
        let layout = target.mapping == .native ? rule.template : "progress"
        if layout != "default" {
            notes.warnings.append(ConfigError(at, path: path + ".template",
                "\(target.name) is on Island Pulse's free tier, which shows the default layout only: the \(layout) layout's \(layout == "progress" ? "bar" : "figures") will not show (its figures go into the message)"))
        }
        notes.coercions.append(ConfigError(at, path: path + ".template", "on \(target.name) (free tier) the layout is sent as default, one job at a time"))
    }

    func schema(template: String) -> ObjectSchema? {
        switch template {
        case "monitor", "generic": return TemplateCatalog.aivi(template)
        // The Island Pulse layout of the same name; Aivi's progress fields are told apart at load by their keys.
        case "progress": return nil
        case let layout where IslandPulseSchema.layouts.contains(layout): return Self.layoutFields
        default: return nil
        }
    }

    func resolve(template: String, reader: MappingReader, others: Set<BackendKind>) -> (ObjectSchema?, PayloadMapping) {
        switch template {
        case "progress":
            // Aivi's progress has a progress bar mapping ({style: …}); Island Pulse's progress layout a number.
            if case .mapping? = reader["progress"]?.kind { return (TemplateCatalog.aivi("progress"), .fromAivi("progress")) }
            return (Self.layoutFields, .native)
        case "monitor", "generic": return (TemplateCatalog.aivi(template), .fromAivi(template))
        default: return (schema(template: template), .native)
        }
    }

    func mappingNote(template: String) -> String {
        "shown as the \(template == "monitor" ? "sports (left column → A, right → B)" : "progress (the bar's value, header_left as the message, compact_value as the metric)") layout"
    }

    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
        self.fields(fields, of: rule, at: target, templateKey: "layout") { IslandPulseMapping.map(template: $0, $1) }.flatMap { fields in
            var body = fields
            body["job_id"] = .string(target.id)
            body["action"] = .string(phase.rawValue)
            if let status = rule.status?.evaluate(in: context, failures: &notes) { body["status"] = status }
            if phase == .end {
                // A finished job's last frame says how it finished: on_end's status when it gives one, else success — a
                // written `running` does not stay on the end.
                if let ending = rule.onEnd.flatMap({ _ in fields["status"] }), ending != .null { body["status"] = ending }
                else if body["status"] == nil || body["status"] == "running" { body["status"] = "success" }
            }
            if target.backend.freeTier { IslandPulseMapping.freeTier(&body) }
            let (normalized, issues) = PayloadNormalizer.normalize(.object(body), as: .object(IslandPulseSchema.body))
            guard issues.isEmpty, let normalized else { return .failure(PayloadIssuesError(issues)) }
            return checkedSize(.islandPulse(backend: target.backend.name, body: normalized))
        }
    }

    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
        .islandPulse(backend: target.backend.name, body: ["job_id": .string(target.id), "action": "end", "status": "success"])
    }

    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest {
        var body = start.body.objectValue ?? [:]
        body["action"] = "end"
        return .islandPulse(backend: target.backend.name, body: .object(body))
    }

    /// A blueprint event's request(s): the payload as written for this service, checked against its schema.
    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
        var body = payload
        body["job_id"] = .string(activity)
        // Start and update are left to Island Pulse's auto-routing: the first post for a job starts it.
        body["action"] = action == .end ? "end" : nil
        if backend.freeTier { IslandPulseMapping.freeTier(&body) }
        let (normalized, problems) = PayloadNormalizer.normalize(.object(body), as: .object(IslandPulseSchema.body), path: "payload")
        guard problems.isEmpty, let normalized else { return .failure(PayloadIssuesError(problems)) }
        return .success([(backend.name, .islandPulse(backend: backend.name, body: normalized))])
    }
}

extension IslandPulseSchema: RenderedService {
    static let rendering: any BackendRendering = IslandPulseRendering()
}

/// Aivi templates shown on Island Pulse, where the shapes match: monitor's columns → sports' A and B,
/// progress and generic → the progress layout.
enum IslandPulseMapping {
    static func map(template: String, _ content: [String: JSONValue]) -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        if let icon = content["icon"] { body["icon"] = icon.stringValue.map(JSONValue.string) ?? icon["name"] }
        switch template {
        case "monitor":
            body["layout"] = "sports"
            body["metricA"] = content["left_column"]?["value"]?["value"]
            body["subA"] = content["left_column"]?["header"] ?? content["left_column"]?["footer"]
            body["metricB"] = content["right_column"]?["value"]?["value"]
            body["subB"] = content["right_column"]?["header"] ?? content["right_column"]?["footer"]
        case "progress":
            body["layout"] = "progress"
            body["progress"] = content["progress"]?["value"]
            body["metric"] = content["compact_value"]?["value"] ?? content["footer_right"]?["value"]
            body["message"] = content["header_left"]?["value"] ?? content["footer_left"]?["value"]
        default:  // generic
            body["layout"] = "progress"
            body["progress"] = content["progress"]
            body["message"] = content["state"]
            if let p = content["progress"]?.doubleValue { body["metric"] = .string("\(Int(saturating: (p * 100).rounded()))%") }
        }
        return body.filter { $0.value != .null }
    }

    /// The free tier shows the default layout only, which needs a message: the layout's figures say it in words.
    static func freeTier(_ body: inout [String: JSONValue]) {
        body["layout"] = "default"
        if (body["message"]?.stringValue ?? "").isEmpty, let summary = summary(body) { body["message"] = .string(summary) }
    }

    /// A one-line message from a layout's figures, for the default layout: "Room Kitchen · Area 12.5", "Step 2/5".
    static func summary(_ body: [String: JSONValue]) -> String? {
        func text(_ key: String) -> String? { body[key].flatMap(PayloadNormalizer.scalarText).flatMap { $0.isEmpty ? nil : $0 } }
        let sides = [(text("subA"), text("metricA")), (text("subB"), text("metricB"))].compactMap { label, value -> String? in
            guard let value else { return nil }
            return label.map { "\($0) \(value)" } ?? value
        }
        if !sides.isEmpty { return sides.joined(separator: " · ") }
        return text("metric") ?? text("secondaryMetric")
    }
}
