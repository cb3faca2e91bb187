/// A command that Home Assistant answered with `success: false`, or that never got its answer.
public struct HomeAssistantError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Home Assistant's error code (`not_found`, `unknown_command`, `home_assistant_error`, …),
    /// or one of ours: `disconnected`, `timeout`, `rejected`, `stopped`.
    public let code: String
    public let message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Home Assistant error \(code): \(message)" }

    static let disconnected = HomeAssistantError(code: "disconnected", message: "the connection was lost before the result arrived")
    static let stopped = HomeAssistantError(code: "stopped", message: "the connection was stopped")
    static let rejected = HomeAssistantError(code: "rejected", message: "Home Assistant rejected the access token")
    static func timeout(_ type: String) -> HomeAssistantError {
        HomeAssistantError(code: "timeout", message: "no result for \(type) in time")
    }
}
