import FoundationEssentials
import Platform
/// A Home Assistant long-lived access token. It prints as a mask, so it cannot leak into logs or errors by accident.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself; read only where it is sent to Home Assistant.
    public let secret: String

    public init(_ secret: String) {
        self.secret = secret.trimmingWhitespace()
    }

    public var isEmpty: Bool { secret.isEmpty }
    public var description: String { "<token redacted>" }
    public var debugDescription: String { description }
}

