public import Dispatcher
public import HTTPClient
public import HomeAssistant
public import Rules
public import LiveActivity
import Platform

/// Makes the push backends a rules file declares: each service's transport, registered by kind.
public enum BackendFactory {
    /// What a transport is made from: the declared backend, its address (the rules' `base_url`, else the service's),
    /// the HTTP client, the Home Assistant connection (nil: none configured) and the limits that span backends (one
    /// ActivitySmith account, one PushWard host), shared by all made with them.
    public struct Parts: Sendable {
        public let backend: RulesFile.Backend
        public let baseURL: String
        public let client: HTTPClient
        public let connection: HomeAssistantConnection?
        public let pacers: PacerRegistry
        public var token: String { backend.token?.secret ?? "" }
    }

    public typealias Maker = @Sendable (Parts) -> any PushBackend

    /// The one place the built-in services' transports are registered.
    private static let makers = Locked<[BackendKind: Maker]>([
        .aivi: { HTTPPushBackend(name: $0.backend.name, baseURL: $0.baseURL, scheme: "Token", token: $0.token, client: $0.client) },
        .islandpulse: {
            HTTPPushBackend(name: $0.backend.name, baseURL: $0.baseURL, scheme: "Bearer", token: $0.token,
                            allowsOneActiveJob: $0.backend.freeTier, client: $0.client)
        },
        .homeassistant: { HomeAssistantPushBackend(name: $0.backend.name, connection: $0.connection) },
        .activitysmith: { ActivitySmithBackend(name: $0.backend.name, baseURL: $0.baseURL, token: $0.token, client: $0.client, pacers: $0.pacers) },
        .pushward: { PushWardBackend(name: $0.backend.name, baseURL: $0.baseURL, token: $0.token, client: $0.client, pacers: $0.pacers) },
    ])

    /// Registers a service's transport (a new one, or one a test makes up).
    public static func register(_ kind: BackendKind, _ maker: @escaping Maker) {
        makers.withLock { $0[kind] = maker }
    }

    public static func make(_ backend: RulesFile.Backend, client: HTTPClient, connection: HomeAssistantConnection?,
                            pacers: PacerRegistry = PacerRegistry()) -> any PushBackend {
        let parts = Parts(backend: backend, baseURL: backend.baseURL ?? backend.kind.definition.baseURL ?? "", client: client,
                          connection: connection, pacers: pacers)
        // A service with no transport of its own speaks plain HTTP with a Bearer token.
        if let maker = makers.withLock({ $0[backend.kind] }) { return maker(parts) }
        return HTTPPushBackend(name: backend.name, baseURL: parts.baseURL, scheme: "Bearer", token: parts.token, client: client)
    }
}
