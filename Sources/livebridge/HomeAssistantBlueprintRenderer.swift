import HomeAssistant
import JSON
import Rules

/// `blueprint test --url`: each template rendered by Home Assistant's `render_template` on its live states, the
/// automation's variables handed over as `{% set %}` statements before it (one connection for the whole run).
final class HomeAssistantBlueprintRenderer: BlueprintRenderer, @unchecked Sendable {
    private let connection: HomeAssistantConnection
    private let url: String

    init(target: HomeAssistantTarget) throws {
        url = target.url
        connection = try HomeAssistantConnection(configuration: try ConnectionConfiguration(url: target.url, token: target.token)) {
            if $0.isError { standardError("livebridge blueprint test: \($0)") }
        }
        connection.start(entityIDs: nil)
    }

    func stop() async { await connection.stop() }

    func render(_ source: String, variables: [String: TemplateValue]) async -> Result<TemplateValue, EvaluationError> {
        let prelude = variables.keys.sorted().map { "{% set \($0) = \(variables[$0]!.jinjaLiteral) %}" }.joined()
        let connection = connection
        let first = await withTaskGroup(of: TemplateRendering?.self) { group in
            group.addTask { await connection.renderings(of: prelude + source).first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(15))
                return nil
            }
            let winner = await group.next() ?? nil
            group.cancelAll()
            return winner
        }
        switch first {
        case .result(let value)?: return .success(TemplateValue(value))
        case .failure(let message)?: return .failure(EvaluationError("Home Assistant could not render it: \(message)"))
        case nil: return .failure(EvaluationError("Home Assistant at \(url) gave no result within 15 seconds"))
        }
    }
}
