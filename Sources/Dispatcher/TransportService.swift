public import HTTPClient
public import LiveActivity

/// A service's transport when plain HTTP is not enough: the conformance of its type (`PushService`, registered with
/// its definition) where its transport lives. A service without one speaks plain HTTP (`HTTPPushBackend`) with its
/// definition's authorization scheme.
public protocol TransportService: PushService {
    static func transport(_ parts: TransportParts) -> any PushBackend
}

/// What a transport is made from: the declared backend's name, token and tier, its address (the rules' `base_url`,
/// else the service's), the HTTP client, the limits that span backends (one account, one host: `pacers`), and the
/// Home Assistant connection for a service that sends through it.
public struct TransportParts: Sendable {
    public let name: String
    public let baseURL: String
    public let token: String
    public let freeTier: Bool
    public let client: HTTPClient
    public let pacers: PacerRegistry
    /// The Home Assistant connection (nil: none configured); its transport knows its type.
    public let connection: (any Sendable)?

    public init(name: String, baseURL: String, token: String, freeTier: Bool, client: HTTPClient, pacers: PacerRegistry, connection: (any Sendable)?) {
        self.name = name
        self.baseURL = baseURL
        self.token = token
        self.freeTier = freeTier
        self.client = client
        self.pacers = pacers
        self.connection = connection
    }
}

extension TransportParts {
    /// How the backend's requests go out: paced to `service`'s documented allowance, with the pacer shared by every
    /// backend that spends it.
    public func sender(for service: BackendDefinition) -> HTTPSender {
        .paced(for: service, baseURL: baseURL, token: token, client: client, pacers: pacers)
    }
}

extension BackendKind {
    /// The push backend for `parts`: its service's own transport, else plain HTTP with its authorization scheme, paced
    /// to the service's documented allowance when it has one.
    public func transport(_ parts: TransportParts) -> any PushBackend {
        if let service = service as? any TransportService.Type { return service.transport(parts) }
        return HTTPPushBackend(name: parts.name, service: definition, baseURL: parts.baseURL, token: parts.token,
                               allowsOneActiveJob: parts.freeTier, sender: parts.sender(for: definition))
    }
}
