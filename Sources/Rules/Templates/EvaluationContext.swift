import FoundationEssentials
import HomeAssistant

/// What a template sees: the entity states and the time, from an injectable clock.
public struct EvaluationContext: Sendable {
    public var states: [String: EntityState]
    /// Seconds since 1970: `now()`.
    public var now: Double
    /// For `timestamp_custom(…, local=true)` (the default, as in Home Assistant).
    public var timeZone: LocalTimeZone

    public init(states: [String: EntityState], now: Double, timeZone: LocalTimeZone = .system) {
        self.states = states
        self.now = now
        self.timeZone = timeZone
    }
}

/// Why a template could not produce a value: the field falls back to its default or is left out.
public struct EvaluationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
