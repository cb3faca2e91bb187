public import JSON
import Platform

/// What one push is: the backend, the HTTP method and path (or the service call), and the exact body.
public struct BackendRequest: Sendable, Equatable, CustomStringConvertible {
    public let backend: String
    public let kind: BackendKind
    /// `PATCH`, `POST`, or `call_service` for Home Assistant.
    public let method: String
    /// `/activity/washer`, `/notify`, or `notify.mobile_app_phone`.
    public let target: String
    public let body: JSONValue
    /// The body as sent, encoded once.
    public let bodyBytes: [UInt8]
    /// An end that leaves its final content on the phone: what takes it away afterwards, and when.
    public internal(set) var dismissal: Dismissal?
    /// PushWard: the activity to create (upsert) before a start's content goes (`POST /activities`).
    public internal(set) var creation: JSONValue?
    /// Home Assistant's end: how long its final content stays, counted from when it is sent (its `dismissal_date` is
    /// set again then: an end held by the settle or a core restart still keeps the content that long).
    public internal(set) var dismissalWindow: Duration?

    /// After an end shown with its final content (PushWard's `dismiss_after`): the request that clears it.
    public struct Dismissal: Sendable, Equatable {
        public let target: String
        public let body: JSONValue
        public let after: Duration
    }

    /// This request with a dismissal: `body` to `target`, `after` it was delivered (a two-phase end).
    public func dismissed(by body: JSONValue, at target: String, after: Duration) -> BackendRequest {
        var request = self
        request.dismissal = Dismissal(target: target, body: body, after: after)
        return request
    }

    /// The request that clears the final content, to send `dismissal.after` after this one was delivered.
    /// The phone whose Home Assistant push relay this request spends (its notify service); nil for the other backends,
    /// whose target is a request path.
    public var relayDevice: String? { kind.definition.spendsRelay ? target : nil }

    public var dismissalRequest: BackendRequest? {
        dismissal.map { BackendRequest(backend: backend, kind: kind, method: method, target: $0.target, body: $0.body) }
    }

    public init(backend: String, kind: BackendKind, method: String, target: String, body: JSONValue) {
        self.backend = backend
        self.kind = kind
        self.method = method
        self.target = target
        self.body = body
        self.bodyBytes = body.jsonBytes
    }

    public var description: String { "\(backend) (\(kind.rawValue)) \(method) \(target)\n" + String(decoding: bodyBytes, as: UTF8.self) }
}

/// Which push of an activity's lifecycle: the first, one of those in between, the last.
public enum PushKind: String, Sendable {
    case start, update, end
}

/// A push service LiveBridge speaks to, by the name a rules file gives as `type:`. Open: a service is a
/// type registered under its name (`BackendDefinition.builtInServices`; a test's own with `BackendDefinition.with(services:)`).
public struct BackendKind: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// The kind of this name, registered or not (a new service names its kind before registering its definition).
    public init(named name: String) { rawValue = name }

    /// The registered service of this name; nil for a name no service has.
    public init?(rawValue: String) {
        guard BackendDefinition.registered(rawValue) != nil else { return nil }
        self.rawValue = rawValue
    }

    /// Every registered service, the built-in ones first, in the order registered.
    public static var allCases: [BackendKind] { BackendDefinition.all.map(\.kind) }

    public var description: String { rawValue }

    /// The key that names an activity at this backend.
    public var idKey: String { definition.idKey }
}
