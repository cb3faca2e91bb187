import HTTPClient
import JSON
import Rules

/// Makes the push backends a rules file declares.
public enum BackendFactory {
    public static let aiviBaseURL = "https://api.getaivi.app"
    public static let islandPulseBaseURL = "https://api.islandpulse.dev"

    /// `callService` carries Home Assistant backends' pushes over the live connection (nil: none configured).
    public static func make(_ backend: RulesFile.Backend, client: HTTPClient,
                            callService: (@Sendable (String, String, [String: JSONValue]) async throws(HomeAssistantPushBackend.ServiceCallError) -> Void)?)
        -> any PushBackend
    {
        switch backend.kind {
        case .aivi:
            return HTTPPushBackend(name: backend.name, baseURL: backend.baseURL ?? aiviBaseURL, scheme: "Token",
                                   token: backend.token?.secret ?? "", client: client)
        case .islandpulse:
            return HTTPPushBackend(name: backend.name, baseURL: backend.baseURL ?? islandPulseBaseURL, scheme: "Bearer",
                                   token: backend.token?.secret ?? "", allowsOneActiveJob: backend.freeTier, client: client)
        case .homeassistant:
            return HomeAssistantPushBackend(name: backend.name) { domain, service, data throws(HomeAssistantPushBackend.ServiceCallError) in
                guard let callService else { throw .init(code: "not_connected") }
                try await callService(domain, service, data)
            }
        }
    }
}
