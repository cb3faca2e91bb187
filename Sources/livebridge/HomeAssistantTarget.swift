import FoundationEssentials
import HomeAssistant
import JSON
import Rules
import WebSocketTransport

/// Where a one-shot command (`render`, `suggest`) reaches a live Home Assistant: `--url` with `--token-file` (or
/// `$LIVEBRIDGE_HA_TOKEN`), or, inside the add-on with neither given, Core through the Supervisor with the add-on's token.
struct HomeAssistantTarget {
    let url: String
    let token: AccessToken
    let throughSupervisor: Bool
    /// TLS as the rules file says it (`ca_file`, `allow_self_signed`); the system's trust otherwise.
    var caFile: String? = nil
    var allowSelfSigned = false

    /// Home Assistant did not give its states: a runtime failure (exit 1), not a mistake in the command line.
    struct NoStatesError: Error, CustomStringConvertible {
        let description: String
    }

    /// nil when the command line names no Home Assistant and this is not the add-on.
    static func from(_ args: ArgumentList, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HomeAssistantTarget? {
        if let url = args["url"] {
            return HomeAssistantTarget(url: url, token: try WatchCommand.readToken(file: args["token-file"]), throughSupervisor: false)
        }
        if args["token-file"] != nil { throw UsageError("--token-file needs --url") }
        guard let supervisor = SupervisorAccess(environment: environment) else { return nil }
        return HomeAssistantTarget(url: supervisor.url, token: AccessToken(supervisor.token), throughSupervisor: true)
    }

    /// Every entity's state now (`get_states`), then the connection closed. Fails with what went wrong: the token
    /// rejected, no answer within `timeout`.
    /// Each entity's place is Home Assistant's order, which templates iterate `states` in.
    func states(timeout: Duration = .seconds(20), command: String) async throws -> (states: [String: EntityState], order: [String]) {
        let snapshot = try await snapshot(timeout: timeout, command: command, registries: false)
        return (snapshot.states, snapshot.order)
    }

    /// Fails at once, saying which address and why, when Home Assistant cannot be reached at all (the name does not
    /// resolve, nothing listens, no answer in 3 s), rather than after a command's timeout.
    func checkReachable() throws {
        let endpoint = try ServerURL.endpoint(from: url)
        if let problem = Reachability.problem(host: endpoint.host, port: endpoint.port) {
            throw NoStatesError(description: "Home Assistant at \(url) cannot be reached: \(problem)")
        }
    }

    /// The one-shot connection every command uses (`render`, `suggest`, `check`, `send`, `blueprint test`, `template`):
    /// for requests only (no entities followed), its errors said on standard error as `command`'s; it runs while
    /// `body` does and is closed when `body` returns or throws.
    func withConnection<T: Sendable>(command: String, timeout: Duration = .seconds(20),
                                     _ body: @Sendable (HomeAssistantConnection) async throws -> T) async throws -> T {
        try checkReachable()
        var configuration = try ConnectionConfiguration(url: url, token: token, caFile: caFile, allowSelfSigned: allowSelfSigned)
        configuration.requestTimeout = timeout
        let connection = try HomeAssistantConnection(configuration: configuration) { event in
            if event.isError { standardError("livebridge \(command): \(event)") }
        }
        return try await connection.running(body)
    }

    /// `LiveActivityPreconditions` against this Home Assistant's services and device registry.
    func liveActivityPreconditions(_ rules: RulesFile, timeout: Duration = .seconds(20)) async throws -> [String] {
        let url = url
        let (services, devices) = try await withConnection(command: "check", timeout: timeout) { connection in
            let services: JSONValue
            do { services = try await connection.getServices() } catch {
                throw NoStatesError(description: "Home Assistant at \(url) gave no services: \(error)")
            }
            let devices = (try? await connection.send(["type": "config/device_registry/list"])) ?? .array([])
            return (services, devices)
        }
        return LiveActivityPreconditions.warnings(rules, services: services, devices: devices)
    }

    /// The states and, when `registries`, where the registries put each entity (devices, areas). Registries Home
    /// Assistant refuses (they are for administrators) leave the directory empty, said on standard error.
    func snapshot(timeout: Duration = .seconds(20), command: String, registries: Bool) async throws
        -> (states: [String: EntityState], order: [String], directory: DeviceDirectory) {
        let url = url
        let (result, directory) = try await withConnection(command: command, timeout: timeout) { connection in
            let result: JSONValue
            do { result = try await connection.send(["type": "get_states"]) } catch {
                if connection.currentPhase == .rejected { throw NoStatesError(description: "Home Assistant at \(url) rejected the access token") }
                throw NoStatesError(description: "Home Assistant at \(url) gave no states: \(error)")
            }
            var directory = DeviceDirectory.empty
            if registries {
                do {
                    async let entities = connection.send(["type": "config/entity_registry/list"])
                    async let devices = connection.send(["type": "config/device_registry/list"])
                    async let areas = connection.send(["type": "config/area_registry/list"])
                    directory = DeviceDirectory(entities: try await entities, devices: try await devices, areas: try await areas)
                } catch {
                    standardError("livebridge \(command): Home Assistant gave no registries (\(error)): names from friendly names, no areas")
                }
            }
            return (result, directory)
        }
        let (states, order) = try StatesFile.parseInOrder(result, source: "get_states from \(url)")
        return (states, order, directory)
    }
}

extension HomeAssistantTarget {
    /// The Home Assistant a rules file names; nil when its token is a placeholder (a secret not set).
    init?(_ settings: RulesFile.HomeAssistantSettings) {
        let secret = settings.token.secret
        guard !secret.isEmpty, !(secret.hasPrefix("<!") && secret.hasSuffix(">")) else { return nil }
        self.init(url: settings.url, token: settings.token, throughSupervisor: settings.throughSupervisor,
                  caFile: settings.caFile, allowSelfSigned: settings.allowSelfSigned)
    }
}
