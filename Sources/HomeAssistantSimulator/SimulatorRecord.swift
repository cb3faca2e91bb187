public import JSON

/// What the simulator has seen, for tests to assert on. Never holds a token.
public struct SimulatorRecord: Sendable {
    /// A command a client sent, with the number of the connection it came on (1-based).
    public struct Command: Sendable, Equatable {
        public let connection: Int
        public let id: Int
        public let type: String
        public let message: JSONValue
    }

    public var connectionsAccepted = 0
    public var authAttempts = 0
    public var authRejections = 0
    public var commands: [Command] = []
    public var serviceCalls: [JSONValue] = []
    public var openConnections = 0
    /// Messages taken in while silent (`setUnresponsive(true)`): received, never answered.
    public var unanswered = 0

    public func commands(ofType type: String) -> [Command] { commands.filter { $0.type == type } }
}
