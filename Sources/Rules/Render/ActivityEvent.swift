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

        let requests: [(target: String, request: BackendRequest)]
        switch backend.kind.rendering.eventRequests(payload, activity: activity, backend: backend, action: action) {
        case .failure(let problems): return .failure(RenderError(activity: activity, issues: problems.list))
        case .success(let built): requests = built
        }
        let request = requests[0].request
        if let problem = ActivityRenderer.sizeProblem(request, path: "payload") {
            return .failure(RenderError(activity: activity, issues: [problem]))
        }
        return .success(ActivityEvent(activity: activity, backend: backend, action: action, requests: requests))
    }
}
