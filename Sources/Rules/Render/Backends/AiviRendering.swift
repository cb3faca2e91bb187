import JSON
import LiveActivity
import Templates

/// Aivi: its templates as its reference gives them, `PATCH /activity/{slug}`.
struct AiviRendering: BackendRendering {
    func schema(template: String) -> ObjectSchema? { TemplateCatalog.aivi(template) }

    func request(_ rule: ActivityRule, _ target: ActivityTarget, _ fields: [String: JSONValue], phase: PushKind,
                 context: EvaluationContext, notes: inout [PayloadIssue]) -> Result<BackendRequest, PayloadIssuesError> {
        normalizedAivi(rule.template, fields).flatMap { content in
            checkedSize(.aivi(backend: target.backend.name, slug: target.id, kind: phase, content: .object(content)))
        }
    }

    func fallbackEnd(_ rule: ActivityRule, _ target: ActivityTarget, last: BackendRequest?, now: Double) -> BackendRequest {
        let content = last?.body["content"] ?? ["template": .string(rule.template)]
        return .aivi(backend: target.backend.name, slug: target.id, kind: .end, content: content)
    }

    func renewalEnd(_ rule: ActivityRule, _ target: ActivityTarget, start: BackendRequest, now: Double) -> BackendRequest {
        .aivi(backend: target.backend.name, slug: target.id, kind: .end, content: start.body["content"] ?? .null)
    }

    /// A blueprint event's request(s): the payload as written for this service, checked against its schema.
    func eventRequests(_ payload: [String: JSONValue], activity: String, backend: RulesFile.Backend, action: ActivityEvent.Action)
        -> Result<[(target: String, request: BackendRequest)], PayloadIssuesError> {
        if action == .end && payload.isEmpty {
            return .success([(backend.name, .aivi(backend: backend.name, slug: activity, kind: .end, content: ["template": "generic", "progress": 1]))])
        }
        let (content, problems) = PayloadNormalizer.normalize(.object(payload), as: AiviSchema.content, path: "payload")
        guard problems.isEmpty, let content else { return .failure(PayloadIssuesError(problems)) }
        return .success([(backend.name, .aivi(backend: backend.name, slug: activity, kind: action == .end ? .end : .update, content: content))])
    }
}

extension AiviSchema: RenderedService {
    static let rendering: any BackendRendering = AiviRendering()
}
