import JSON

/// What one push is: the backend, the HTTP method and path (or the service call), and the exact body.
public struct BackendRequest: Sendable, Equatable, CustomStringConvertible {
    public let backend: String
    public let kind: RulesFile.BackendKind
    /// `PATCH`, `POST`, or `call_service` for Home Assistant.
    public let method: String
    /// `/activity/washer`, `/notify`, or `notify.mobile_app_phone`.
    public let target: String
    public let body: JSONValue
    /// The body as sent, encoded once.
    public let bodyBytes: [UInt8]

    public init(backend: String, kind: RulesFile.BackendKind, method: String, target: String, body: JSONValue) {
        self.backend = backend
        self.kind = kind
        self.method = method
        self.target = target
        self.body = body
        self.bodyBytes = body.jsonBytes
    }

    public var description: String { "\(backend) (\(kind.rawValue)) \(method) \(target)\n" + String(decoding: bodyBytes, as: UTF8.self) }
}

/// Which push of the lifecycle is being rendered.
public enum ActivityPhase: String, Sendable {
    case start, update, end
}
