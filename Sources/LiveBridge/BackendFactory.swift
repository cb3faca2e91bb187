public import Dispatcher
public import HTTPClient
public import HomeAssistant
public import Rules
import LiveActivity

/// Makes the push backends a rules file declares.
public enum BackendFactory {
    public static let aiviBaseURL = "https://api.getaivi.app"
    public static let islandPulseBaseURL = "https://api.islandpulse.dev"
    public static let pushWardBaseURL = "https://api.pushward.app"
    /// Where ActivitySmith's SDKs send their requests (assumed from them; `base_url` overrides it).
    public static let activitySmithBaseURL = "https://activitysmith.com/api"

    /// `connection` carries Home Assistant backends' pushes (nil: none configured).
    /// `pacers`: the limits that span backends (one ActivitySmith account, one PushWard host), shared by all made with it.
    public static func make(_ backend: RulesFile.Backend, client: HTTPClient, connection: HomeAssistantConnection?,
                            pacers: PacerRegistry = PacerRegistry()) -> any PushBackend {
        switch backend.kind {
        case .aivi:
            return HTTPPushBackend(name: backend.name, baseURL: backend.baseURL ?? aiviBaseURL, scheme: "Token",
                                   token: backend.token?.secret ?? "", client: client)
        case .islandpulse:
            return HTTPPushBackend(name: backend.name, baseURL: backend.baseURL ?? islandPulseBaseURL, scheme: "Bearer",
                                   token: backend.token?.secret ?? "", allowsOneActiveJob: backend.freeTier, client: client)
        case .homeassistant:
            return HomeAssistantPushBackend(name: backend.name, connection: connection)
        case .activitysmith:
            return ActivitySmithBackend(name: backend.name, baseURL: backend.baseURL ?? activitySmithBaseURL, token: backend.token?.secret ?? "",
                                        client: client, pacers: pacers)
        case .pushward:
            return PushWardBackend(name: backend.name, baseURL: backend.baseURL ?? pushWardBaseURL, token: backend.token?.secret ?? "", client: client,
                                   pacers: pacers)
        }
    }
}
