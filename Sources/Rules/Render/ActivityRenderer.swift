import JSON
public import LiveActivity
public import Templates
import Platform
import HomeAssistant

/// Evaluates a rule against entity states: whether it is active, and the exact request its backend receives.
/// Pure: states and the time come in, a request or the reasons there is none come out.
public enum ActivityRenderer {
    /// The phone's limit for a Live Activity's content state.
    public static let contentLimit = 4096

    public static func isActive(_ rule: ActivityRule, in context: EvaluationContext) -> Result<Bool, EvaluationError> {
        do { return .success(try rule.activeWhen.evaluate(in: context).isTruthy) } catch { return .failure(error) }
    }

    /// The request for `phase`, or every problem that stops it (invalid payloads are never sent).
    /// `notes` receives fields left out because their template failed.
    /// Whether a change must skip the update budget: an Island Pulse status turning to `failed`. Only the status
    /// field is evaluated, not the payload.
    public static func isUrgent(_ rule: ActivityRule, in context: EvaluationContext) -> Bool {
        var ignored: [PayloadIssue] = []
        return rule.status?.evaluate(in: context, failures: &ignored) == "failed"
    }

    public static func render(_ rule: ActivityRule, for target: ActivityTarget, phase: PushKind, in context: EvaluationContext,
                              notes: inout [PayloadIssue]) -> Result<BackendRequest, RenderError> {
        let tree = phase == .end && rule.onEnd != nil ? FieldTree.merge(rule.fields, rule.onEnd!) : rule.fields
        guard case .object(var fields)? = tree.evaluate(in: context, failures: &notes) else {
            return .failure(RenderError(activity: rule.id, issues: [PayloadIssue(path: "", "fields did not evaluate")]))
        }
        resolveAutoIcon(&fields, rule: rule, context: context, keepsMDI: target.kind == .pushward, notes: &notes)
        // on_end's `status` is Island Pulse's alone (how the job finished).
        if phase == .end, target.kind != .islandpulse, case .object(let written)? = rule.onEnd, written.contains(where: { $0.0 == "status" }) {
            fields["status"] = nil
        }
        let result: Result<BackendRequest, PayloadIssuesError>
        switch (target.kind, target.mapping) {
        case (.aivi, _):
            result = aivi(rule, target, fields, phase: phase)
        case (.islandpulse, .aiviToIslandPulse(let template)):
            result = normalizedAivi(template, fields).flatMap {
                islandPulse(rule, target, IslandPulseMapping.map(template: template, $0), phase: phase, context: context, notes: &notes)
            }
        case (.islandpulse, _):
            var body = fields
            body["layout"] = .string(rule.template)
            result = islandPulse(rule, target, body, phase: phase, context: context, notes: &notes)
        case (.homeassistant, .aiviToLiveUpdate(let template)):
            result = normalizedAivi(template, fields).flatMap {
                liveUpdate(rule, target, LiveUpdateMapping.map(template: template, $0, now: context.now), phase: phase, now: context.now)
            }
        case (.homeassistant, _):
            result = liveUpdate(rule, target, fields, phase: phase, now: context.now)
        case (.activitysmith, .aiviToActivitySmith(let template)):
            result = normalizedAivi(template, fields).flatMap {
                activitySmith(rule, target, ActivitySmithMapping.map(template: template, $0, title: rule.id), phase: phase)
            }
        case (.activitysmith, _):
            var state = fields
            state["type"] = .string(rule.template)
            result = activitySmith(rule, target, state, phase: phase)
        case (.pushward, .aiviToPushWard(let template)):
            result = normalizedAivi(template, fields).flatMap { pushWard(rule, target, PushWardMapping.map(template: template, $0, now: context.now), phase: phase, now: context.now) }
        case (.pushward, _):
            var content = fields
            content["template"] = .string(rule.template)
            result = pushWard(rule, target, content, phase: phase, now: context.now)
        }
        return result.mapError { RenderError(activity: rule.id, issues: $0.list) }
    }

    /// The end push `run` sends: the rendered end, or when its fields cannot be rendered a minimal end built from the
    /// last request sent (`last`), so an end is never lost. The failure is added to `notes`.
    public static func end(_ rule: ActivityRule, for target: ActivityTarget, in context: EvaluationContext, last: BackendRequest?,
                           notes: inout [PayloadIssue]) -> BackendRequest {
        let result = render(rule, for: target, phase: .end, in: context, notes: &notes)
        if case .success(let request) = result { return request }
        if case .failure(let failure) = result { notes += failure.issues }
        let backend = target.backend
        switch backend.kind {
        case .aivi:
            let content = last?.body["content"] ?? ["template": .string(rule.template)]
            return .aivi(backend: backend.name, slug: target.id, kind: .end, content: content)
        case .islandpulse:
            return .islandPulse(backend: backend.name, body: ["job_id": .string(target.id), "action": "end", "status": "success"])
        case .homeassistant:
            return .homeAssistant(backend: backend.name, service: target.service, fields: ["tag": .string(target.id)], kind: .end,
                                  dismissAfter: .zero, now: context.now)
        case .pushward:
            let content = last?.body["content"] ?? ["template": "generic", "progress": 1]
            return pushWardRequest(rule, target, content: content, phase: .end, dismissAfter: .zero)
        case .activitysmith:
            let state = last?.body["content_state"] ?? ["type": "progress", "title": .string(rule.id), "percentage": 100]
            return .activitySmith(backend: backend.name, key: target.id, kind: .end, contentState: state, channels: backend.channels,
                                  dismissAfter: rule.dismissAfter(for: .activitysmith))
        }
    }

    /// Renewing an activity before iOS ends it at eight hours: an end showing what it shows now (no `on_end`
    /// content; Home Assistant's clears at once) and a start of the same, rendered now so its timers are anchored
    /// afresh.
    public static func renewal(_ rule: ActivityRule, for target: ActivityTarget, in context: EvaluationContext,
                               notes: inout [PayloadIssue]) -> Result<(end: BackendRequest, start: BackendRequest), RenderError> {
        render(rule, for: target, phase: .start, in: context, notes: &notes).map { start in
            let end: BackendRequest
            switch target.kind {
            case .aivi:
                end = .aivi(backend: target.backend.name, slug: target.id, kind: .end, content: start.body["content"] ?? .null)
            case .islandpulse:
                var body = start.body.objectValue ?? [:]
                body["action"] = "end"
                end = .islandPulse(backend: target.backend.name, body: .object(body))
            case .homeassistant:
                end = .homeAssistant(backend: target.backend.name, service: target.service, fields: ["tag": .string(target.id)], kind: .end,
                                     dismissAfter: .zero, now: context.now)
            case .pushward:
                end = pushWardRequest(rule, target, content: start.body["content"] ?? .null, phase: .end, dismissAfter: .zero)
            case .activitysmith:
                end = .activitySmith(backend: target.backend.name, key: target.id, kind: .end, contentState: start.body["content_state"] ?? .null,
                                     channels: target.backend.channels, dismissAfter: .zero)
            }
            return (end, start)
        }
    }

    static func normalizedAivi(_ template: String, _ fields: [String: JSONValue]) -> Result<[String: JSONValue], PayloadIssuesError> {
        var content = fields
        content["template"] = .string(template)
        let (normalized, issues) = PayloadNormalizer.normalize(.object(content), as: AiviSchema.content)
        guard issues.isEmpty, let object = normalized?.objectValue else { return .failure(PayloadIssuesError(issues)) }
        return .success(object)
    }

    static func aivi(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind) -> Result<BackendRequest, PayloadIssuesError> {
        normalizedAivi(rule.template, fields).flatMap { content in
            let request = BackendRequest.aivi(backend: target.backend.name, slug: target.id, kind: phase, content: .object(content))
            if let problem = sizeProblem(request) { return .failure(PayloadIssuesError([problem])) }
            return .success(request)
        }
    }

    static func islandPulse(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                            context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
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
        let request = BackendRequest.islandPulse(backend: target.backend.name, body: normalized)
        if let problem = sizeProblem(request) { return .failure(PayloadIssuesError([problem])) }
        return .success(request)
    }

    /// Over the phone's limit? Aivi's content or Island Pulse's body is what the Live Activity holds; a Home Assistant
    /// live update is the companion app's business.
    static func sizeProblem(_ request: BackendRequest, path: String = "") -> PayloadIssue? {
        let size: Int
        switch request.kind {
        case .aivi, .pushward, .activitysmith:
            // The body less its `{"content":…,"state":"…"}` wrapper.
            size = request.bodyBytes.count - #"{"content":,"state":""}"#.utf8.count - (request.body["state"]?.stringValue?.utf8.count ?? 0)
        case .islandpulse:
            size = request.bodyBytes.count
        case .homeassistant:
            return nil
        }
        guard size > contentLimit else { return nil }
        return PayloadIssue(path: path, "the payload is \(size) bytes; a Live Activity holds at most \(contentLimit)")
    }

    static func activitySmith(_ rule: ActivityRule, _ target: ActivityTarget, _ state: [String: JSONValue], phase: PushKind)
        -> Result<BackendRequest, PayloadIssuesError> {
        let (normalized, issues) = PayloadNormalizer.normalize(.object(state), as: ActivitySmithSchema.contentState)
        guard issues.isEmpty, let normalized else { return .failure(PayloadIssuesError(issues)) }
        let request = BackendRequest.activitySmith(backend: target.backend.name, key: target.id, kind: phase, contentState: normalized,
                                                   channels: target.backend.channels, dismissAfter: rule.dismissAfter(for: .activitysmith))
        if let problem = sizeProblem(request) { return .failure(PayloadIssuesError([problem])) }
        return .success(request)
    }

    static func pushWard(_ rule: ActivityRule, _ target: ActivityTarget, _ content: [String: JSONValue], phase: PushKind,
                         now: Double) -> Result<BackendRequest, PayloadIssuesError> {
        let (normalized, issues) = PayloadNormalizer.normalize(.object(content), as: PushWardSchema.content)
        guard issues.isEmpty, let normalized else { return .failure(PayloadIssuesError(issues)) }
        // PushWard ends a countdown itself at its end_date: a completion frame after that would revive it for
        // dismiss_after, so such an end is `ended` at once.
        let serverEnded = normalized["template"] == "countdown" && (normalized["end_date"]?.doubleValue ?? .infinity) <= now
        let request = pushWardRequest(rule, target, content: normalized, phase: phase,
                                      dismissAfter: serverEnded ? .zero : rule.dismissAfter(for: .pushward))
        if let problem = sizeProblem(request) { return .failure(PayloadIssuesError([problem])) }
        return .success(request)
    }

    /// The PushWard request for this content, with the activity's creation (name, priority, time to live).
    static func pushWardRequest(_ rule: ActivityRule, _ target: ActivityTarget, content: JSONValue, phase: PushKind, dismissAfter: Duration) -> BackendRequest {
        let options = rule.pushWard
        var creation: [String: JSONValue] = ["slug": .string(target.id), "name": .string(rule.id), "priority": .int(options.priority ?? 1)]
        if let ttl = options.endedTTL { creation["ended_ttl"] = .int(Int(ttl.components.seconds)) }
        if let ttl = options.staleTTL { creation["stale_ttl"] = .int(Int(ttl.components.seconds)) }
        return .pushWard(backend: target.backend.name, slug: target.id, kind: phase, content: content, priority: options.priority,
                         sound: options.sound, creation: .object(creation), dismissAfter: dismissAfter,
                         dismissalTTL: options.dismissalTTL.map { Int($0.components.seconds) })
    }

    static func liveUpdate(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind, now: Double)
        -> Result<BackendRequest, PayloadIssuesError> {
        var body = fields
        body["tag"] = .string(target.id)
        let (normalized, issues) = PayloadNormalizer.normalize(.object(body), as: .object(LiveUpdateSchema.fields))
        guard issues.isEmpty, var object = normalized?.objectValue else { return .failure(PayloadIssuesError(issues)) }
        if phase != .end, object["stale_date"] == nil, let stale = staleDate(object, now: now) { object["stale_date"] = .int(stale) }
        return .success(.homeAssistant(backend: target.backend.name, service: target.service, fields: object, kind: phase,
                                       dismissAfter: rule.dismissAfter, now: now))
    }

    /// When the Lock Screen should show a live update as out of date if no other push comes: a minute past its
    /// countdown's end (the content says nothing true after it). Derived from the content only, so an unchanged
    /// content renders the same push and is not sent again; nil without a countdown.
    static func staleDate(_ fields: [String: JSONValue], now: Double) -> Int? {
        guard let when = fields["when"]?.doubleValue, fields["when_relative"]?.boolValue != true, when > now else { return nil }
        return Int(saturating: when + 60)
    }

    /// `keepsMDI`: the backend draws Material Design icons itself (PushWard).
    static func resolveAutoIcon(_ fields: inout [String: JSONValue], rule: ActivityRule, context: EvaluationContext, keepsMDI: Bool,
                                notes: inout [PayloadIssue]) {
        // The phone draws SF Symbols: a Material Design icon (Home Assistant's) becomes the SF Symbol for it.
        if !keepsMDI, let icon = fields["icon"]?.stringValue ?? fields["icon"]?["name"]?.stringValue, icon.hasPrefix("mdi:") {
            guard let symbol = IconCatalog.symbol(forMDI: icon) else {
                fields["icon"] = nil
                notes.append(PayloadIssue(path: "icon", "\(icon) has no SF Symbol LiveBridge knows (the phone draws SF Symbols); the icon is left out"))
                return
            }
            if case .object(var object)? = fields["icon"] {
                object["name"] = .string(symbol)
                fields["icon"] = .object(object)
            } else {
                fields["icon"] = .string(symbol)
            }
            return
        }
        guard fields["icon"] == "auto" else { return }
        let entity = rule.mainEntity ?? rule.activeWhen.sortedEntityIDs.first
        if let entity, let state = context.states[entity], let symbol = IconCatalog.symbol(for: state) {
            fields["icon"] = .string(symbol)
        } else {
            fields["icon"] = nil
            notes.append(PayloadIssue(path: "icon", "auto found no symbol for \(entity ?? "the activity"); the icon is left out"))
        }
    }
}

/// Why an activity produced no request.
public struct RenderError: Error, Sendable, CustomStringConvertible {
    public let activity: String
    public let issues: [PayloadIssue]
    public var description: String { "activity \(activity): " + issues.map(\.description).joined(separator: "; ") }
}

/// Problems as an error value, so they can travel in a `Result`.
struct PayloadIssuesError: Error {
    let list: [PayloadIssue]
    init(_ list: [PayloadIssue]) { self.list = list }
}
