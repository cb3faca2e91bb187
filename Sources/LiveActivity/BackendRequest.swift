import JSON

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

    public init(backend: String, kind: BackendKind, method: String, target: String, body: JSONValue) {
        self.backend = backend
        self.kind = kind
        self.method = method
        self.target = target
        self.body = body
        self.bodyBytes = body.jsonBytes
    }

    /// Aivi: `PATCH /activity/{slug}` with the activity's state (`IDLE` for the end, else `ONGOING`) and content.
    public static func aivi(backend: String, slug: String, kind: PushKind, content: JSONValue) -> BackendRequest {
        BackendRequest(backend: backend, kind: .aivi, method: "PATCH", target: "/activity/\(slug)",
                       body: ["state": kind == .end ? "IDLE" : "ONGOING", "content": content])
    }

    /// Island Pulse: `POST /notify` with the job's whole body (its `job_id` and `action` included).
    public static func islandPulse(backend: String, body: JSONValue) -> BackendRequest {
        BackendRequest(backend: backend, kind: .islandpulse, method: "POST", target: "/notify", body: body)
    }

    /// Home Assistant: the live update's fields as a call of the notify `service` (`notify.notify` when none is named);
    /// the end clears the notification.
    public static func homeAssistant(backend: String, service: String?, fields: [String: JSONValue], kind: PushKind) -> BackendRequest {
        BackendRequest(backend: backend, kind: .homeassistant, method: "call_service", target: service ?? "notify.notify",
                       body: LiveUpdateSchema.serviceData(fields, ending: kind == .end))
    }

    public var description: String { "\(backend) (\(kind.rawValue)) \(method) \(target)\n" + String(decoding: bodyBytes, as: UTF8.self) }
}

/// Which push of an activity's lifecycle: the first, one of those in between, the last.
public enum PushKind: String, Sendable {
    case start, update, end
}

/// The push services LiveBridge speaks to.
public enum BackendKind: String, Sendable, CaseIterable {
    case aivi, islandpulse, homeassistant

    /// The key that names an activity at this backend.
    public var idKey: String {
        switch self {
        case .aivi: return "slug"
        case .islandpulse: return "job_id"
        case .homeassistant: return "tag"
        }
    }
}
