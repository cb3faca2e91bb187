/// Where a client connects: host, port and path, and how TLS is checked.
public struct WebSocketEndpoint: Sendable, Equatable {
    public enum Security: Sendable, Equatable {
        case plain
        /// TLS verified against the system trust store, or against `caFile` when given.
        /// `allowSelfSigned` accepts a self-signed certificate and skips the host name check: an explicit opt-in.
        case tls(caFile: String?, allowSelfSigned: Bool)
    }

    public var host: String
    public var port: Int
    public var path: String
    public var security: Security

    public init(host: String, port: Int, path: String, security: Security = .plain) {
        self.host = host
        self.port = port
        self.path = path
        self.security = security
    }
}
