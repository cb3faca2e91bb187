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

    public var description: String { "\(backend) (\(kind.rawValue)) \(method) \(target)\n\(body.jsonText)" }
}

/// Which push of the lifecycle is being rendered.
public enum ActivityPhase: String, Sendable {
    case start, update, end
}
