import FoundationEssentials
public import JSON
public import LiveActivity
import Platform

/// The blueprint path: a Home Assistant event (default `livebridge_activity`) whose data names an activity, an action,
/// a backend and a payload. It is checked by the same schemas as rule-made payloads and becomes the same kind of request.
///
/// `data: {activity: washer, action: start|update|end|ONGOING|IDLE, backend: aivi, payload: {template: progress, …}}`
///
/// `start` (and Aivi's `ONGOING`) shows the activity: it starts it, or updates it when it runs already. `update`
/// only updates a running activity: an update for one that never started (the appliance not confirmed running) does
/// nothing. `end` (`IDLE`) ends it.
public struct ActivityEvent: Sendable {
    public enum Action: Sendable, Equatable { case show, update, end }

    public let activity: String
    public let backend: RulesFile.Backend
    public let action: Action
    /// One request per target: the backend, or each phone of a Home Assistant backend naming several.
    public let requests: [(target: String, request: BackendRequest)]

    /// The request to the first (usually the only) target.
    public var request: BackendRequest { requests[0].request }

    /// The event, or every problem with it (each naming its field).
    public static func decode(_ data: JSONValue, rules: RulesFile) -> Result<ActivityEvent, RenderError> {
        var issues: [PayloadIssue] = []
        let activity = data["activity"]?.stringValue ?? ""
        if activity.isEmpty { issues.append(PayloadIssue(path: "activity", "is required: the slug, job_id or tag of the activity")) }
        let action: Action?
        switch data["action"]?.stringValue ?? "start" {
        case "start", "ONGOING": action = .show
        case "update": action = .update
        case "end", "IDLE": action = .end
        case let other:
            action = nil
            issues.append(PayloadIssue(path: "action", "unknown action \(OutsideText.quoted(other)); expected start, update, end, ONGOING or IDLE"))
        }
        let name = data["backend"]?.stringValue ?? rules.defaultBackend
        let backend = name.flatMap { rules.backends[$0] }
        if backend == nil {
            issues.append(PayloadIssue(path: "backend", name.map { "no backend named \(OutsideText.quoted($0)); the rules declare: " + rules.backends.keys.sorted().joined(separator: ", ") }
                ?? "is required (the rules have no default backend)"))
        }
        // The id becomes a path, a job id or a tag at the backend: checked against its grammar before anything else,
        // and a failing one is not repeated as the activity's name.
        var named = activity
        if let backend, !activity.isEmpty, let problem = backend.kind.idProblem(activity) {
            issues.append(PayloadIssue(path: "activity", problem + " (backend \(backend.name))"))
        }
        if (backend?.kind ?? .aivi).idProblem(activity) != nil { named = "" }
        let payload = data["payload"]?.objectValue ?? [:]
        if data["payload"] == nil, action != .end { issues.append(PayloadIssue(path: "payload", "is required to start or update")) }
        guard issues.isEmpty, let backend, let action else { return .failure(RenderError(activity: named, issues: issues)) }

        var request: BackendRequest
        var requests: [(target: String, request: BackendRequest)] = []
        switch backend.kind {
        case .aivi:
            if action == .end && payload.isEmpty {
                request = .aivi(backend: backend.name, slug: activity, kind: .end, content: ["template": "generic", "progress": 1])
                break
            }
            let (content, problems) = PayloadNormalizer.normalize(.object(payload), as: AiviSchema.content, path: "payload")
            guard problems.isEmpty, let content else { return .failure(RenderError(activity: activity, issues: problems)) }
            request = .aivi(backend: backend.name, slug: activity, kind: action == .end ? .end : .update, content: content)
        case .islandpulse:
            var body = payload
            body["job_id"] = .string(activity)
            // Start and update are left to Island Pulse's auto-routing: the first post for a job starts it.
            body["action"] = action == .end ? "end" : nil
            if backend.freeTier { IslandPulseMapping.freeTier(&body) }
            let (normalized, problems) = PayloadNormalizer.normalize(.object(body), as: .object(IslandPulseSchema.body), path: "payload")
            guard problems.isEmpty, let normalized else { return .failure(RenderError(activity: activity, issues: problems)) }
            request = .islandPulse(backend: backend.name, body: normalized)
        case .homeassistant:
            var fields = payload
            fields["tag"] = .string(activity)
            if action == .end, fields["message"] == nil { fields["message"] = "" }
            let schema = action == .end ? LiveUpdateSchema.fields.allOptional : LiveUpdateSchema.fields
            let (normalized, problems) = PayloadNormalizer.normalize(.object(fields), as: .object(schema), path: "payload")
            guard problems.isEmpty, let object = normalized?.objectValue else { return .failure(RenderError(activity: activity, issues: problems)) }
            request = .homeAssistant(backend: backend.name, service: backend.service, fields: object, kind: action == .end ? .end : .update,
                                     dismissAfter: .zero, now: Date().timeIntervalSince1970)
            if backend.services.count > 1 {
                // Every phone the backend names, each its own lane.
                requests = backend.services.map { service in
                    (backend.name + "/" + service, .homeAssistant(backend: backend.name, service: service, fields: object,
                                                                  kind: action == .end ? .end : .update, dismissAfter: .zero,
                                                                  now: Date().timeIntervalSince1970))
                }
            }
        case .pushward:
            var content = payload
            if action == .end && content.isEmpty { content = ["template": "generic", "progress": 1] }
            let (normalized, problems) = PayloadNormalizer.normalize(.object(content), as: PushWardSchema.content, path: "payload")
            guard problems.isEmpty, let normalized else { return .failure(RenderError(activity: activity, issues: problems)) }
            request = .pushWard(backend: backend.name, slug: activity, kind: action == .end ? .end : .update, content: normalized, priority: nil,
                                sound: nil, creation: ["slug": .string(activity), "name": .string(activity), "priority": 1], dismissAfter: .zero)
        case .activitysmith:
            var state = payload
            if action == .end && state.isEmpty { state = ["type": "progress", "title": .string(activity), "percentage": 100] }
            let (normalized, problems) = PayloadNormalizer.normalize(.object(state), as: ActivitySmithSchema.contentState, path: "payload")
            guard problems.isEmpty, let normalized else { return .failure(RenderError(activity: activity, issues: problems)) }
            request = .activitySmith(backend: backend.name, key: activity, kind: action == .end ? .end : .update, contentState: normalized,
                                     channels: backend.channels, dismissAfter: .zero)
        }
        if requests.isEmpty { requests = [(backend.name, request)] }
        if let problem = ActivityRenderer.sizeProblem(request, path: "payload") {
            return .failure(RenderError(activity: activity, issues: [problem]))
        }
        return .success(ActivityEvent(activity: activity, backend: backend, action: action, requests: requests))
    }
}
