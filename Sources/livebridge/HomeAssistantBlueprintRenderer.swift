import HomeAssistant
import Rules
import Templates

/// `blueprint test --url`: each template rendered by Home Assistant's `render_template` on its live states, the
/// automation's variables handed over as `{% set %}` statements before it (one connection for the whole run, the
/// caller's `HomeAssistantTarget.withConnection`).
struct HomeAssistantBlueprintRenderer: BlueprintRenderer {
    let connection: HomeAssistantConnection
    let url: String

    func render(_ source: String, variables: [String: TemplateValue]) async -> Result<TemplateValue, EvaluationError> {
        let prelude = variables.keys.sorted().map { "{% set \($0) = \(variables[$0]!.jinjaLiteral) %}" }.joined()
        return await HomeAssistantRendering.renderOnce(prelude + source, on: connection, url: url)
    }
}
