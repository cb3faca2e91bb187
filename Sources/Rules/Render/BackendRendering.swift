import JSON
import LiveActivity
import Platform
import Templates

/// How rules reach one service: which of its templates a rule may write (and their fields), how a rule written in
/// Aivi's vocabulary is shown there, and how a rule's evaluated fields become its request — the end when the end
/// cannot be rendered, and the end of a renewal, included. One per service, its type's `RenderedService` conformance;
/// the loader, `ActivityRenderer` and the rule notes consult it instead of switching on the kind.
protocol BackendRendering: Sendable {
    /// The rule-level schema of one of its own templates (the payload's fields less those LiveBridge fills in); nil
    /// when it has no such template.
    func schema(template: String) -> ObjectSchema?
    /// How `template`, as the rule writes it, reaches this backend: its own, or an Aivi template shown in its
    /// vocabulary. `others`: the kinds of the rule's other targets. Nil schema: the template cannot go there.
    func resolve(template: String, reader: MappingReader, others: Set<BackendKind>) -> (ObjectSchema?, PayloadMapping)
    /// What the rule notes say when an Aivi template is shown in this backend's vocabulary.
    func mappingNote(template: String) -> String
    /// The request for the rule's evaluated `fields` (icons resolved).
    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError>
    /// The end to send when the end cannot be rendered, from the last request sent (`last`), so an end is never lost.
    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest
    /// The end of a renewal: showing what `start` shows (Home Assistant's clears at once).
    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest
    /// A blueprint event's request(s), one per target: the payload as written for this service, checked against its
    /// schema (an end with no payload: a plain end).
    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError>
    /// The rule keys that only some services take, those this one does (`status`, `dismiss_after`, `priority`…).
    var ruleKeys: Set<String> { get }
    /// The statuses a rule's `status` and `on_end.status` may give the job (nil: it takes none).
    var statuses: [String]? { get }
    /// Its own checks of a rule at load beyond the template's schema (fixed text over a layout's limits…).
    func check(_ reader: MappingReader, template: String, mapping: PayloadMapping, path: String, errors: inout [ConfigError])
    /// Its options of a rule, from the rule's keys it takes (`ruleKeys`); nil: none. Kept in `ActivityRule.options`.
    func ruleOptions(_ reader: MappingReader, path: String, errors: inout [ConfigError]) -> (any Sendable)?
    /// Its keys of a backend declaration beyond type, token, base_url and tier (`service`, `channels`…).
    func decodeBackend(_ reader: MappingReader, into backend: inout RulesFile.Backend, errors: inout [ConfigError])
    /// What `check` says of a target of its kind besides the mapping (a free tier's limits…).
    func notes(_ rule: ActivityRule, _ target: ActivityTarget, at: SourceLocation, path: String, into notes: inout RuleNotes)
    /// Whether it draws Material Design icons itself (`mdi:…` kept as written).
    var drawsMDIIcons: Bool { get }
}

extension BackendRendering {
    var ruleKeys: Set<String> { [] }
    var statuses: [String]? { nil }
    var drawsMDIIcons: Bool { false }
    /// Whether `on_end` may say how the job finished (`status`).
    var endsWithStatus: Bool { statuses != nil }
    func check(_ reader: MappingReader, template: String, mapping: PayloadMapping, path: String, errors: inout [ConfigError]) {}
    func ruleOptions(_ reader: MappingReader, path: String, errors: inout [ConfigError]) -> (any Sendable)? { nil }
    func decodeBackend(_ reader: MappingReader, into backend: inout RulesFile.Backend, errors: inout [ConfigError]) {}
    func notes(_ rule: ActivityRule, _ target: ActivityTarget, at: SourceLocation, path: String, into notes: inout RuleNotes) {}
    func resolve(template: String, reader: MappingReader, others: Set<BackendKind>) -> (ObjectSchema?, PayloadMapping) {
        (schema(template: template), .native)
    }
    func mappingNote(template: String) -> String { "shown in its own vocabulary" }
}

/// A service's rendering: the conformance of its type (`PushService`, registered with its definition) in Rules.
protocol RenderedService: PushService {
    static var rendering: any BackendRendering { get }
}

extension BackendKind {
    /// How rules reach this service (its type's `RenderedService` conformance); a service without one takes no
    /// template, so a rule naming it is refused at load.
    var rendering: any BackendRendering { (service as? any RenderedService.Type)?.rendering ?? UnrenderedService(kind: self) }
}

/// A service defined but without a rendering: no template goes to it (the loader says so), nothing is rendered.
struct UnrenderedService: BackendRendering {
    let kind: BackendKind

    func schema(template: String) -> ObjectSchema? { nil }

    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
        .failure(PayloadIssuesError([PayloadIssue(path: "", "no rendering is registered for \(kind.rawValue)")]))
    }

    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
        last ?? BackendRequest(backend: target.backend.name, kind: kind, method: "POST", target: "/", body: [:])
    }

    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest { start }

    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
        .failure(PayloadIssuesError([PayloadIssue(path: "backend", "no rendering is registered for \(kind.rawValue)")]))
    }
}

/// How a rule's fields become its backend's payload: as written for it, or an Aivi template shown in its vocabulary.
enum PayloadMapping: Sendable, Equatable {
    case native
    case fromAivi(String)
}

/// Problems as an error value, so they can travel in a `Result`.
struct PayloadIssuesError: Error {
    let list: [PayloadIssue]
    init(_ list: [PayloadIssue]) { self.list = list }
}

extension BackendRendering {
    /// An Aivi template's fields, normalized against Aivi's schema (the input of every mapping).
    func normalizedAivi(_ template: String, _ fields: [String: JSONValue]) -> Result<[String: JSONValue], PayloadIssuesError> {
        var content = fields
        content["template"] = .string(template)
        let (normalized, issues) = PayloadNormalizer.normalize(.object(content), as: AiviSchema.content)
        guard issues.isEmpty, let object = normalized?.objectValue else { return .failure(PayloadIssuesError(issues)) }
        return .success(object)
    }

    /// The rule's fields as this service takes them: an Aivi template's normalized, then mapped by `fromAivi`; the
    /// rule's own template's with its name where the service reads it (`templateKey`: `layout`, `template`, `type`).
    func fields(_ fields: [String: JSONValue], of rule: ActivityRule, at target: ActivityTarget, templateKey: String?,
                fromAivi: (String, [String: JSONValue]) -> [String: JSONValue]) -> Result<[String: JSONValue], PayloadIssuesError> {
        switch target.mapping {
        case .fromAivi(let template): return normalizedAivi(template, fields).map { fromAivi(template, $0) }
        case .native:
            var own = fields
            if let templateKey { own[templateKey] = .string(rule.template) }
            return .success(own)
        }
    }

    /// The request, unless it is over the phone's limit for a Live Activity's content.
    func checkedSize(_ request: BackendRequest) -> Result<BackendRequest, PayloadIssuesError> {
        if let problem = ActivityRenderer.sizeProblem(request) { return .failure(PayloadIssuesError([problem])) }
        return .success(request)
    }
}
