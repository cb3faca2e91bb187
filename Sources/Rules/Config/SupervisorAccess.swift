import HomeAssistant

/// Home Assistant as a Home Assistant add-on reaches it: through the Supervisor's proxy, with the token the Supervisor
/// gives the add-on (`homeassistant_api: true` in its manifest) — no long-lived token to create.
public struct SupervisorAccess: Sendable, Equatable {
    /// Where the Supervisor sets the add-on's token.
    public static let tokenVariable = "SUPERVISOR_TOKEN"
    /// Core's WebSocket API behind the Supervisor.
    public static let url = "ws://supervisor/core/websocket"

    public let token: String

    /// The connection settings of a rules file that names no Home Assistant.
    var settings: RulesFile.HomeAssistantSettings {
        var settings = RulesFile.HomeAssistantSettings(url: Self.url, token: AccessToken(token))
        settings.throughSupervisor = true
        return settings
    }
}
