import HomeAssistant

/// Home Assistant as a Home Assistant add-on reaches it: through the Supervisor's proxy, with the token the Supervisor
/// gives the add-on (`homeassistant_api: true` in its manifest) — no long-lived token to create.
public struct SupervisorAccess: Sendable, Equatable {
    /// Where the Supervisor sets the add-on's token.
    public static let tokenVariable = "SUPERVISOR_TOKEN"
    /// Where the Supervisor is, when not `supervisor` (its name on the add-ons' network): only to run the add-on's
    /// entry point outside a container, against a stand-in.
    public static let hostVariable = "LIVEBRIDGE_SUPERVISOR_HOST"
    public static let defaultHost = "supervisor"

    public let token: String
    public var host = Self.defaultHost

    /// Core's WebSocket API behind the Supervisor: `ws://supervisor/core/websocket`.
    public var url: String { "ws://\(host)/core/websocket" }

    /// The connection settings of a rules file that names no Home Assistant.
    var settings: RulesFile.HomeAssistantSettings {
        var settings = RulesFile.HomeAssistantSettings(url: url, token: AccessToken(token))
        settings.throughSupervisor = true
        return settings
    }

    public init(token: String, host: String = Self.defaultHost) {
        (self.token, self.host) = (token, host)
    }

    /// Running as an add-on: `$SUPERVISOR_TOKEN` set and not empty.
    public init?(environment: [String: String]) {
        guard let token = environment[Self.tokenVariable], !token.isEmpty else { return nil }
        self.init(token: token, host: environment[Self.hostVariable].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultHost)
    }
}
