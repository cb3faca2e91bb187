import JSON
public import LiveActivity
public import Templates
import Platform

/// Evaluates a rule against entity states: whether it is active, and the exact request its backend receives.
/// Pure: states and the time come in, a request or the reasons there is none come out.
public enum ActivityRenderer {
    /// The phone's limit for a Live Activity's content state.
    public static let contentLimit = 4096

    public static func isActive(_ rule: ActivityRule, in context: EvaluationContext) -> Result<Bool, EvaluationError> {
        isActive(rule.activeWhen, in: context)
    }

    /// Whether an `active_when` condition holds: its value's truth, as Jinja's `if` takes it.
    public static func isActive(_ condition: Template, in context: EvaluationContext) -> Result<Bool, EvaluationError> {
        do { return .success(try condition.evaluate(in: context).isTruthy) } catch { return .failure(error) }
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
        let rendering = target.rendering
        resolveAutoIcon(&fields, rule: rule, context: context, keepsMDI: rendering.drawsMDIIcons, notes: &notes)
        // on_end's `status` is Island Pulse's alone (how the job finished).
        if phase == .end, !rendering.endsWithStatus, case .object(let written)? = rule.onEnd, written.contains(where: { $0.0 == "status" }) {
            fields["status"] = nil
        }
        let result = rendering.request(rule, target, fields, phase: phase, context: context, notes: &notes)
        return result.mapError { RenderError(activity: rule.id, issues: $0.list) }
    }

    /// The end push `run` sends: the rendered end, or when its fields cannot be rendered a minimal end built from the
    /// last request sent (`last`), so an end is never lost. The failure is added to `notes`.
    public static func end(_ rule: ActivityRule, for target: ActivityTarget, in context: EvaluationContext, last: BackendRequest?,
                           notes: inout [PayloadIssue]) -> BackendRequest {
        let result = render(rule, for: target, phase: .end, in: context, notes: &notes)
        if case .success(let request) = result { return request }
        if case .failure(let failure) = result { notes += failure.issues }
        return target.rendering.fallbackEnd(rule, target, last: last, now: context.now)
    }

    /// Renewing an activity before iOS ends it at eight hours: an end showing what it shows now (no `on_end`
    /// content; Home Assistant's clears at once) and a start of the same, rendered now so its timers are anchored
    /// afresh.
    public static func renewal(_ rule: ActivityRule, for target: ActivityTarget, in context: EvaluationContext,
                               notes: inout [PayloadIssue]) -> Result<(end: BackendRequest, start: BackendRequest), RenderError> {
        render(rule, for: target, phase: .start, in: context, notes: &notes).map { start in
            (target.rendering.renewalEnd(rule, target, start: start, now: context.now), start)
        }
    }

    /// Over the phone's limit? Aivi's content or Island Pulse's body is what the Live Activity holds; a Home Assistant
    /// live update is the companion app's business.
    static func sizeProblem(_ request: BackendRequest, path: String = "") -> PayloadIssue? {
        guard let size = request.kind.definition.contentSize(request) else { return nil }
        guard size > contentLimit else { return nil }
        return PayloadIssue(path: path, "the payload is \(size) bytes; a Live Activity holds at most \(contentLimit)")
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

