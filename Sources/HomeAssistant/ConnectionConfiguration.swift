public import WebSocketTransport

/// Everything the connection needs to reach and keep talking to Home Assistant.
public struct ConnectionConfiguration: Sendable {
    public var url: String
    public var endpoint: WebSocketEndpoint
    public var token: AccessToken
    /// TCP + TLS + WebSocket upgrade must finish within this.
    public var handshakeTimeout: Duration = .seconds(15)
    /// auth_ok must arrive within this after the socket opened.
    public var authTimeout: Duration = .seconds(30)
    /// A `ping` goes out this often; no `pong` within `pongTimeout` means the connection is dead.
    public var pingInterval: Duration = .seconds(30)
    public var pongTimeout: Duration = .seconds(10)
    /// Requests without a result after this fail with code `timeout`.
    public var requestTimeout: Duration = .seconds(30)
    /// While Home Assistant is starting, get_config is asked again this often.
    public var startupPollInterval: Duration = .seconds(2)
    public var reconnect = ReconnectPolicy()
    /// How entity states are followed.
    public enum EntitySource: String, Sendable {
        /// `subscribe_entities` filtered to the watched ids: compressed, only what is needed (the default).
        case subscribeEntities = "subscribe_entities"
        /// `get_states` then every `state_changed` event, filtered here: the fallback for servers or proxies without
        /// subscribe_entities, at the cost of receiving every entity's changes.
        case stateChanged = "state_changed"
    }

    public var entitySource = EntitySource.subscribeEntities
    /// A message larger than this is dropped and the connection re-established.
    public var maximumMessageSize: Int = 64 << 20

    public init(url: String, token: AccessToken, caFile: String? = nil, allowSelfSigned: Bool = false) throws {
        self.url = url
        self.endpoint = try ServerURL.endpoint(from: url, caFile: caFile, allowSelfSigned: allowSelfSigned)
        self.token = token
    }

    /// The URL as dialled, for logs.
    public var displayURL: String {
        let scheme = if case .plain = endpoint.security { "ws" } else { "wss" }
        return "\(scheme)://\(endpoint.host):\(endpoint.port)\(endpoint.path)"
    }
}
