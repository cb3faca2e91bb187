/// What a service, Home Assistant or the transport said about a push, typed: the rules that read it (a refusal for good,
/// a stop for a while, the lane's next step) match cases, not text. `description` is the code as the service spells it
/// (logs, metrics, the status page); `explanation` says what to do about it, for the log.
public enum DeliveryCode: Sendable, Equatable, CustomStringConvertible {
    /// ACTIVITY_ALREADY_RUNNING (Aivi, Island Pulse): a start for an activity the phone shows.
    case activityAlreadyRunning
    /// FREE_TIER_JOB_LOCKED (Island Pulse's free plan).
    case freeTierJobLocked
    /// DEVICE_NOT_REGISTERED (Island Pulse): the app has not registered the ID yet.
    case deviceNotRegistered
    /// MISSING_UNIQUE_ID, UNAUTHORIZED: the credentials are wrong; no push will go until the rules change.
    case missingUniqueID, unauthorized
    /// PushWard: quota.exceeded (the month's updates), activity.not_found, integration_key.slug_invalid.
    case quotaExceeded, activityNotFound, slugInvalid
    /// PushWard: a create refused with a plain 403 (the key lacks the activity:manage scope).
    case scopeMissing
    /// ActivitySmith: its fifth Live Activity at once; a stream paused (the update taken, not shown).
    case liveActivityLimit, paused
    /// LiveBridge refused before sending: the target is no path under the service's base URL; the service is no
    /// `notify.…` name; no Home Assistant connection; nothing was rendered to send.
    case invalidTarget, invalidService, notConnected, noRequest
    /// Home Assistant's own error codes (`not_found`, `home_assistant_error`…).
    case homeAssistant(String)
    /// The link to Home Assistant dropped after a start or an update went: core may have run it, so it is taken as sent.
    case disconnectedTakenAsSent
    /// The transport: no answer in time, or curl's error number.
    case timeout, transport(Int32)
    /// Any other code a service sent (bounded), as sent.
    case service(String)

    /// The code a service's answer carried (`error` or `code`), typed where LiveBridge acts on it.
    public init(service text: String) {
        switch text {
        case "ACTIVITY_ALREADY_RUNNING": self = .activityAlreadyRunning
        case "FREE_TIER_JOB_LOCKED": self = .freeTierJobLocked
        case "DEVICE_NOT_REGISTERED": self = .deviceNotRegistered
        case "MISSING_UNIQUE_ID": self = .missingUniqueID
        case "UNAUTHORIZED": self = .unauthorized
        case "quota.exceeded": self = .quotaExceeded
        case "activity.not_found": self = .activityNotFound
        case "integration_key.slug_invalid": self = .slugInvalid
        default: self = .service(text)
        }
    }

    public var description: String {
        switch self {
        case .activityAlreadyRunning: return "ACTIVITY_ALREADY_RUNNING"
        case .freeTierJobLocked: return "FREE_TIER_JOB_LOCKED"
        case .deviceNotRegistered: return "DEVICE_NOT_REGISTERED"
        case .missingUniqueID: return "MISSING_UNIQUE_ID"
        case .unauthorized: return "UNAUTHORIZED"
        case .quotaExceeded: return "quota.exceeded"
        case .activityNotFound: return "activity.not_found"
        case .slugInvalid: return "integration_key.slug_invalid"
        case .scopeMissing: return "forbidden"
        case .liveActivityLimit: return "live_activity_limit"
        case .paused: return "paused"
        case .invalidTarget: return "invalid_target"
        case .invalidService: return "invalid_service"
        case .notConnected: return "not_connected"
        case .noRequest: return "no_request"
        case .homeAssistant(let code): return code
        case .disconnectedTakenAsSent: return "disconnected: taken as sent"
        case .timeout: return "timeout"
        case .transport(let code): return "curl \(code)"
        case .service(let text): return text
        }
    }

    /// What to do about a refusal with this code, when there is more to say than the code.
    public var explanation: String? {
        switch self {
        case .deviceNotRegistered: return "the app has not registered this ID yet; open it on the phone once, then check the ID in the rules"
        case .activityNotFound: return "PushWard ended and removed it; it starts again at the next start"
        case .slugInvalid: return "the key is restricted to other activity slugs; allow this one in PushWard or use another key"
        case .scopeMissing: return "the key needs the activity:manage scope to create activities"
        case .quotaExceeded: return "the plan's monthly updates are used up: pushes resume when the quota resets next month"
        case .invalidTarget: return "the target is no path under the service's address; nothing was sent"
        default: return nil
        }
    }

    /// The code and what to do about it, as the log says a refusal.
    public var explained: String { explanation.map { "\(description): \($0)" } ?? description }

    /// Refused for good: the credentials are wrong, no push to this backend will go until the rules change.
    public var isPermanent: Bool { self == .missingUniqueID || self == .unauthorized }

    /// Why a refusal with this code stops the backend for a while rather than for good; nil for other codes.
    public var limitReason: String? {
        switch self {
        case .quotaExceeded: return "the plan's monthly updates are used up (quota.exceeded): pushes resume when the quota resets next month"
        case .deviceNotRegistered: return "the Island Pulse app has not registered this ID yet (DEVICE_NOT_REGISTERED): open it on the phone once"
        default: return nil
        }
    }
}
