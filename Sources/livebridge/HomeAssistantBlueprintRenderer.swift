import HomeAssistant
import Rules
import Templates

/// `blueprint test --url`: each template rendered by Home Assistant's `render_template` on its live states, the
/// automation's variables handed over as `{% set %}` statements before it (one connection for the whole run).
final class HomeAssistantBlueprintRenderer: BlueprintRenderer, @unchecked Sendable {
    private let connection: HomeAssistantConnection
    private let url: String

    init(target: HomeAssistantTarget) throws {
        url = target.url
        connection = try target.connect(command: "blueprint test")
    }

    func stop() async { await connection.stop() }

    func render(_ source: String, variables: [String: TemplateValue]) async -> Result<TemplateValue, EvaluationError> {
        let prelude = variables.keys.sorted().map { "{% set \($0) = \(variables[$0]!.jinjaLiteral) %}" }.joined()
        return await HomeAssistantRendering.renderOnce(prelude + source, on: connection, url: url)
    }
}
