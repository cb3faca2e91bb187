public import Dispatcher
public import HTTPClient
public import HomeAssistant
public import Rules
import LiveActivity

/// Makes the push backends a rules file declares: each service's transport, found by its kind.
public enum BackendFactory {
    public static func make(_ backend: RulesFile.Backend, client: HTTPClient, connection: HomeAssistantConnection?,
                            pacers: PacerRegistry = PacerRegistry()) -> any PushBackend {
        backend.kind.transport(TransportParts(
            name: backend.name, baseURL: backend.baseURL ?? backend.kind.definition.baseURL ?? "", token: backend.token?.secret ?? "",
            freeTier: backend.freeTier, client: client, pacers: pacers, connection: connection))
    }
}
