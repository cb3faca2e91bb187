import FoundationEssentials
import HomeAssistant
import Templates

/// For `render --url --token-file`: asks a live Home Assistant to render the templates only it can (one
/// `render_template` each, the first result taken), so the printed request shows what the phone would.
enum HomeAssistantRendering {
    static func fetch(_ templates: [String], from target: HomeAssistantTarget, command: String = "render") async throws
        -> [String: Result<TemplateValue, EvaluationError>] {
        guard !templates.isEmpty else { return [:] }
        let url = target.url
        return try await target.withConnection(command: command) { connection in
            var results: [String: Result<TemplateValue, EvaluationError>] = [:]
            for template in templates {
                results[template] = await renderOnce(template, on: connection, url: url)
            }
            return results
        }
    }

    /// One `render_template` on `connection`: its first result, Home Assistant's error, or none within 15 seconds.
    static func renderOnce(_ template: String, on connection: HomeAssistantConnection, url: String) async -> Result<TemplateValue, EvaluationError> {
        let first = await withTaskGroup(of: TemplateRendering?.self) { group in
            group.addTask { await connection.renderings(of: template).first { _ in true } }
            group.addTask {
                try? await Task.sleep(for: .seconds(15))
                return nil
            }
            let winner = await group.next() ?? nil
            group.cancelAll()
            return winner
        }
        switch first {
        case .result(let value, let text)?: return .success(TemplateValue(homeAssistantResult: value, text: text))
        case .failure(let message)?: return .failure(EvaluationError("Home Assistant could not render it: \(message)"))
        case nil: return .failure(EvaluationError("Home Assistant at \(url) gave no result within 15 seconds"))
        }
    }
}
