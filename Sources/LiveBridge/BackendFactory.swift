public import Dispatcher
public import HTTPClient
public import HomeAssistant
public import Rules
import LiveActivity

/// Makes the push backends a rules file declares.
public enum BackendFactory {
    /// `connection` carries Home Assistant backends' pushes (nil: none configured).
    /// `pacers`: the limits that span backends (one ActivitySmith account, one PushWard host), shared by all made with it.
    public static func make(_ backend: RulesFile.Backend, client: HTTPClient, connection: HomeAssistantConnection?,
                            pacers: PacerRegistry = PacerRegistry()) -> any PushBackend {
        let baseURL = backend.baseURL ?? backend.kind.definition.baseURL ?? ""
        switch backend.kind {
        case .aivi:
            return HTTPPushBackend(name: backend.name, baseURL: baseURL, scheme: "Token",
                                   token: backend.token?.secret ?? "", client: client)
        case .islandpulse:
            return HTTPPushBackend(name: backend.name, baseURL: baseURL, scheme: "Bearer",
                                   token: backend.token?.secret ?? "", allowsOneActiveJob: backend.freeTier, client: client)
        case .homeassistant:
            return HomeAssistantPushBackend(name: backend.name, connection: connection)
        case .activitysmith:
            return ActivitySmithBackend(name: backend.name, baseURL: baseURL, token: backend.token?.secret ?? "",
                                        client: client, pacers: pacers)
        case .pushward:
            return PushWardBackend(name: backend.name, baseURL: baseURL, token: backend.token?.secret ?? "", client: client,
                                   pacers: pacers)
        }
    }
}
