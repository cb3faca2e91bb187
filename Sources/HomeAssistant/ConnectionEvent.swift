import FoundationEssentials
import Platform
/// What the connection reports about itself, for logs and health. Never carries the token.
public enum ConnectionEvent: Sendable, Equatable, CustomStringConvertible {
    case connecting(url: String, attempt: Int)
    case connected
    case authenticated(haVersion: String?)
    /// Home Assistant is up but not RUNNING yet; the snapshot waits.
    case waitingForStartup(coreState: String)
    case ready(entities: Int)
    case disconnected(reason: String)
    case reconnecting(after: Duration)
    /// auth_invalid: final, nothing more is attempted.
    case rejected(message: String)
    case warning(String)
    /// An entity asked for that Home Assistant does not have, with the closest id it does have.
    case missingEntity(MissingEntity)
    case stopped

    public var description: String {
        switch self {
        case .connecting(let url, let attempt): return "connecting to \(url)" + (attempt > 0 ? " (attempt \(attempt + 1))" : "")
        case .connected: return "connected; authenticating"
        case .authenticated(let version): return "authenticated" + (version.map { " to Home Assistant \($0)" } ?? "")
        case .waitingForStartup(let state): return "Home Assistant is \(state); waiting for RUNNING before trusting its states"
        case .ready(let count): return "ready: \(count) entities in the snapshot"
        case .disconnected(let reason): return "disconnected: \(reason)"
        case .reconnecting(let delay): return "reconnecting in \(Self.seconds(delay))"
        case .rejected(let message):
            return "Home Assistant rejected the access token (\(message)); not retrying. Create a new long-lived token and restart."
        case .warning(let text): return text
        case .missingEntity(let missing): return missing.description
        case .stopped: return "stopped"
        }
    }

    /// The same event with the access token masked in its text (`AccessToken.masking(in:)`), whole or cut short.
    public func redacting(_ secret: String) -> ConnectionEvent {
        let token = AccessToken(secret)
        func masked(_ text: String) -> String { token.masking(in: text) }
        switch self {
        case .connecting(let url, let attempt): return .connecting(url: masked(url), attempt: attempt)
        case .authenticated(let version): return .authenticated(haVersion: version.map(masked))
        case .waitingForStartup(let state): return .waitingForStartup(coreState: masked(state))
        case .disconnected(let reason): return .disconnected(reason: masked(reason))
        case .rejected(let message): return .rejected(message: masked(message))
        case .warning(let text): return .warning(masked(text))
        case .missingEntity(let missing): return .missingEntity(missing.redacting(token))
        case .connected, .ready, .reconnecting, .stopped: return self
        }
    }

    public var isError: Bool {
        switch self {
        case .rejected, .warning, .missingEntity: return true
        default: return false
        }
    }

    static func seconds(_ d: Duration) -> String {
        let ms = d.wholeMilliseconds
        guard ms % 1000 != 0 else { return "\(ms / 1000)s" }
        let fraction = String(abs(ms % 1000))
        return "\(ms < 0 ? "-" : "")\(abs(ms) / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
    }
}

/// An entity id the rules read (or `watch` was given) that Home Assistant does not have: a typo, or an integration
/// that is gone. Its state reads as `unknown`, so the mistake would otherwise pass silently.
public struct MissingEntity: Sendable, Equatable, CustomStringConvertible {
    public let entityID: String
    /// The closest id Home Assistant has, if one is close.
    public let suggestion: String?

    public init(entityID: String, suggestion: String?) {
        self.entityID = entityID
        self.suggestion = suggestion
    }

    public var description: String {
        "\(entityID) is not an entity in Home Assistant" + (suggestion.map { " (did you mean \($0)?)" } ?? "")
    }

    /// The same with `token` masked: the suggestion is one of Home Assistant's ids, which a hostile server chooses.
    func redacting(_ token: AccessToken) -> MissingEntity {
        MissingEntity(entityID: token.masking(in: entityID), suggestion: suggestion.map(token.masking(in:)))
    }
}

/// Where the connection stands.
public enum ConnectionPhase: String, Sendable, Equatable {
    case idle, connecting, authenticating, waitingForStartup, subscribing, ready, disconnected, rejected, stopped
}

