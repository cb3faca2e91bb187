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
    public var description: String { Self.redacted }
    /// What stands in a text where a token was.
    static let redacted = SecretMasking.redacted
    public var debugDescription: String { description }

    /// `text` with the token masked wherever Home Assistant's own text quoted it back: whole, or only its start where
    /// the quote was cut to a length (an upgrade answer is quoted to 80 characters; a JWT's signature is its end, the
    /// part cut off). Every run of at least twelve characters the token begins with is masked, as far as it matches,
    /// also as `OutsideText.quoted` escapes it; runs that overlap or touch become one mask. A token under 8
    /// characters is left alone: it would mask ordinary words, and no access token is that short. Linear in the text.
    public func masking(in text: String) -> String {
        Self.masking([self], in: text)
    }

    /// `text` with every one of `tokens` masked as `masking(in:)` masks one (`SecretMasking`).
    public static func masking(_ tokens: [AccessToken], in text: String) -> String {
        SecretMasking.masking(tokens.map(\.secret), in: text)
    }
}

