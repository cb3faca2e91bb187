public import JSON

/// What Home Assistant rendered for a template through `render_template`: the result with Home Assistant's native
/// types (a number stays a number), or why it could not.
public enum TemplateRendering: Sendable, Equatable {
    case result(JSONValue)
    case failure(String)

    /// One event of a `render_template` subscription: `{"result": …, "listeners": …}` or, with `report_errors`,
    /// `{"error": …, "level": "ERROR"}`; nil for a warning (the render still gives a result).
    init?(event: JSONValue) {
        if let result = event["result"] { self = .result(result); return }
        guard let message = event["error"]?.stringValue, event["level"]?.stringValue != "WARNING" else { return nil }
        self = .failure(message)
    }

    /// The same with `token` masked in a failure's text, which is Home Assistant's (a hostile server's) and is logged.
    func redacting(_ token: AccessToken) -> TemplateRendering {
        if case .failure(let message) = self { return .failure(token.masking(in: message)) }
        return self
    }

    /// Why Home Assistant refused the subscription itself.
    init(refusal error: HomeAssistantError) {
        self = .failure(error.code == .unauthorized
            ? "render_template needs an administrator's token, and the token LiveBridge uses is not one: create one as an administrator"
            : "Home Assistant refused to render it: \(error.code): \(error.message)")
    }
}
