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
    public private(set) var dismissal: Dismissal?
    /// PushWard: the activity to create (upsert) before a start's content goes (`POST /activities`).
    public private(set) var creation: JSONValue?
    /// Home Assistant's end: how long its final content stays, counted from when it is sent (its `dismissal_date` is
    /// set again then: an end held by the settle or a core restart still keeps the content that long).
    public private(set) var dismissalWindow: Duration?

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

    /// ActivitySmith: `PUT /live-activity/stream/{key}` with `{content_state, channels?}` to start or update the
    /// stream's activity; the end is `DELETE` of the same path with the final content, dismissed `dismissAfter` later
    /// (`auto_dismiss_seconds`). The DELETE body has no `channels` (its schema refuses unknown keys: a 400), and a
    /// timer's `duration_seconds` goes only with the start (on an update it would restart the timer).
    public static func activitySmith(backend: String, key: String, kind: PushKind, contentState: JSONValue, channels: [String],
                                     dismissAfter: Duration) -> BackendRequest {
        var state = contentState.objectValue ?? [:]
        if kind == .end { state["auto_dismiss_seconds"] = .int(Int(dismissAfter.components.seconds)) }
        if kind != .start, state["type"] == "timer" { state["duration_seconds"] = nil }
        var body: [String: JSONValue] = ["content_state": .object(state)]
        if !channels.isEmpty, kind != .end { body["channels"] = .array(channels.map(JSONValue.string)) }
        return BackendRequest(backend: backend, kind: .activitysmith, method: kind == .end ? "DELETE" : "PUT", target: "/live-activity/stream/\(key)",
                              body: .object(body))
    }

    /// PushWard: `PATCH /activities/{slug}` with `{state?, content, priority?, sound?}`. A start also creates the
    /// activity (`creation`, upserted) and says `ongoing`; an update says no state, so PushWard keeps the one it has:
    /// an activity it ended itself (a countdown's end, `stale_ttl`) or evicted stays so, never started again by an
    /// update. An end with `dismissAfter` above zero is PushWard's two-phase end: the final content (no state), then
    /// `ended` that long after; otherwise it is `ended` at once. `dismissalTTL`: how many seconds the ended activity
    /// stays on the Lock Screen (sent with `ended`).
    public static func pushWard(backend: String, slug: String, kind: PushKind, content: JSONValue, priority: Int?, sound: String?,
                                creation: JSONValue, dismissAfter: Duration, dismissalTTL: Int? = nil) -> BackendRequest {
        func body(_ state: String?) -> JSONValue {
            var object: [String: JSONValue] = ["content": content]
            if let state { object["state"] = .string(state) }
            if state == "ended", let dismissalTTL { object["dismissal_ttl"] = .int(dismissalTTL) }
            if let priority { object["priority"] = .int(priority) }
            if let sound, kind != .update { object["sound"] = .string(sound) }
            return .object(object)
        }
        let twoPhase = kind == .end && dismissAfter > .zero
        var request = BackendRequest(backend: backend, kind: .pushward, method: "PATCH", target: "/activities/\(slug)",
                                     body: body(kind == .start ? "ongoing" : kind == .end && !twoPhase ? "ended" : nil))
        request.creation = creation
        if twoPhase { request.dismissal = Dismissal(target: "/activities/\(slug)", body: body("ended"), after: dismissAfter) }
        return request
    }

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

    /// Home Assistant: the live update's fields as a call of the notify `service` (`notify.notify` when none is named).
    /// The end is one push: `clear_notification` with the final content, shown until `dismissAfter` from `now`
    /// (zero: dismissed at once). Nothing is left pending.
    public static func homeAssistant(backend: String, service: String?, fields: [String: JSONValue], kind: PushKind,
                                     dismissAfter: Duration, now: Double) -> BackendRequest {
        let target = service ?? "notify.notify"
        let body = kind == .end
            ? LiveUpdateSchema.endData(fields, dismissalDate: Int(saturating: now) + Int(dismissAfter.components.seconds), now: now)
            : LiveUpdateSchema.serviceData(fields)
        var request = BackendRequest(backend: backend, kind: .homeassistant, method: "call_service", target: target, body: body)
        if kind == .end { request.dismissalWindow = dismissAfter }
        return request
    }

    public var description: String { "\(backend) (\(kind.rawValue)) \(method) \(target)\n" + String(decoding: bodyBytes, as: UTF8.self) }
}

/// Which push of an activity's lifecycle: the first, one of those in between, the last.
public enum PushKind: String, Sendable {
    case start, update, end
}

/// A push service LiveBridge speaks to, by the name a rules file gives as `type:`. Open: a service is a
/// `BackendDefinition` registered under its name (`BackendDefinition.register`); the five below are built in.
public struct BackendKind: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let aivi = BackendKind(named: "aivi")
    public static let islandpulse = BackendKind(named: "islandpulse")
    public static let homeassistant = BackendKind(named: "homeassistant")
    public static let pushward = BackendKind(named: "pushward")
    public static let activitysmith = BackendKind(named: "activitysmith")

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
