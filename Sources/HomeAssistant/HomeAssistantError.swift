/// A command that Home Assistant answered with `success: false`, or that never got its answer.
public struct HomeAssistantError: Error, Equatable, CustomStringConvertible, Sendable {
    /// Home Assistant's error code (`not_found`, `unknown_command`, `home_assistant_error`, …),
    /// or one of ours: `disconnected`, `timeout`, `rejected`, `stopped`, `cancelled`.
    public let code: Code
    public let message: String

    /// An error code: those Home Assistant's WebSocket API sends (`websocket_api/const.py`) and this client's own.
    /// Home Assistant may send others; they keep their text.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        // This client's own.
        /// The link dropped before the answer came.
        public static let disconnected: Code = "disconnected"
        /// No answer in time (Home Assistant uses the same code for its own time-outs).
        public static let timeout: Code = "timeout"
        /// The access token was refused: nothing more is tried.
        public static let rejected: Code = "rejected"
        /// The connection was stopped by its owner.
        public static let stopped: Code = "stopped"
        /// The task waiting for the answer was cancelled: it stopped waiting (the command may still run).
        public static let cancelled: Code = "cancelled"

        // Home Assistant's.
        public static let unauthorized: Code = "unauthorized"
        public static let notFound: Code = "not_found"
        public static let unknownCommand: Code = "unknown_command"
        public static let invalidFormat: Code = "invalid_format"
        public static let homeAssistantError: Code = "home_assistant_error"
        public static let serviceValidationError: Code = "service_validation_error"
        public static let templateError: Code = "template_error"
        public static let unknownError: Code = "unknown_error"

        /// The link or Home Assistant itself failed, not the request: worth trying again.
        public var isTransient: Bool { [Code.disconnected, .timeout, .homeAssistantError, .unknownError].contains(self) }
    }

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "Home Assistant error \(code): \(message)" }

    static let disconnected = HomeAssistantError(code: .disconnected, message: "the connection was lost before the result arrived")
    static let stopped = HomeAssistantError(code: .stopped, message: "the connection was stopped")
    static let cancelled = HomeAssistantError(code: .cancelled, message: "the waiting task was cancelled")
    static let rejected = HomeAssistantError(code: .rejected, message: "Home Assistant rejected the access token")
    static func timeout(_ type: String) -> HomeAssistantError {
        HomeAssistantError(code: .timeout, message: "no result for \(type) in time")
    }
}
