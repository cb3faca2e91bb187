public import LiveActivity

/// What a service, Home Assistant or the transport said about a push, typed: the rules that read it (a refusal for
/// good, a stop for a while, the lane's next step) match meanings, not text. A service's own codes come from its
/// definition (`ServiceCode`); the rest are LiveBridge's, Home Assistant's and the transport's. `description` is the
/// code as it was spelt (logs, metrics, the status page); `explanation` says what to do about it, for the log.
public enum DeliveryCode: Sendable, Equatable, CustomStringConvertible {
    /// A code of the service's own that LiveBridge acts on.
    case known(ServiceCode)
    /// LiveBridge refused before sending: the target is no path under the service's base URL; the service is no
    /// `notify.…` name; no Home Assistant connection; nothing was rendered to send.
    case invalidTarget, invalidService, notConnected, noRequest
    /// Home Assistant's own error codes (`not_found`, `home_assistant_error`…).
    case homeAssistant(String)
    /// The link to Home Assistant dropped after a start or an update went: core may have run it, so it is taken as sent.
    case disconnectedTakenAsSent
    /// The transport: no answer in time, or curl's error number and what it means (an answer's headers over their
    /// bound, a connection refused).
    case timeout, transport(Int32, why: String = "")
    /// Any other code a service sent (bounded), as sent.
    case service(String)

    /// The code `text` a service's answer carried (`error` or `code`), known if its definition lists it.
    public init(service text: String, of definition: BackendDefinition?) {
        self = definition?.code(text).map(DeliveryCode.known) ?? .service(text)
    }

    /// The service's code with this meaning (a transport that recognises an answer by its status).
    public static func known(_ meaning: ServiceCode.Meaning, of definition: BackendDefinition) -> DeliveryCode {
        definition.code(meaning: meaning).map(DeliveryCode.known) ?? .service("\(meaning)")
    }

    /// What a service's own code means (nil: not one LiveBridge acts on).
    public var meaning: ServiceCode.Meaning? {
        if case .known(let code) = self { code.meaning } else { nil }
    }

    public var description: String {
        switch self {
        case .known(let code): return code.text
        case .invalidTarget: return "invalid_target"
        case .invalidService: return "invalid_service"
        case .notConnected: return "not_connected"
        case .noRequest: return "no_request"
        case .homeAssistant(let code): return code
        case .disconnectedTakenAsSent: return "disconnected: taken as sent"
        case .timeout: return "timeout"
        case .transport(let code, _): return "curl \(code)"
        case .service(let text): return text
        }
    }

    /// What to do about a refusal with this code, when there is more to say than the code.
    public var explanation: String? {
        switch self {
        case .known(let code): return code.explanation
        case .invalidTarget: return "the target is no path under the service's address; nothing was sent"
        case .transport(_, let why) where !why.isEmpty: return why
        default: return nil
        }
    }

    /// The code and what to do about it, as the log says a refusal.
    public var explained: String { explanation.map { "\(description): \($0)" } ?? description }

    /// The code as a push's log line gives it: a transport's failure with its reason, any other code as spelt.
    public var logged: String {
        if case .transport = self { explained } else { description }
    }

    /// Refused for good: the credentials are wrong, no push to this backend will go until the rules change.
    public var isPermanent: Bool { meaning == .credentialsRefused }

    /// Why a refusal with this code stops the backend for a while rather than for good; nil for other codes.
    public var limitReason: String? {
        if case .known(let code) = self { code.limitReason } else { nil }
    }
}
