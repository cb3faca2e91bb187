public import HomeAssistant
public import LiveActivity
import Templates

/// A loaded, checked rules file: where Home Assistant is, the backends, the budget defaults and the activities.
public struct RulesFile: Sendable {
    public struct HomeAssistantSettings: Sendable, Equatable {
        public var url: String
        public var token: AccessToken
        public var caFile: String? = nil
        public var allowSelfSigned = false
        /// Reached through the Supervisor with its token (running as an add-on), not named in the file.
        public var throughSupervisor = false
        /// `subscribe_entities` (default) or the `state_changed` fallback.
        public var entitySource: ConnectionConfiguration.EntitySource = .subscribeEntities
        /// A ping this often; no pong within `pongTimeout` and the link is taken as dead and dialled again.
        public var pingInterval: Duration = .seconds(30)
        public var pongTimeout: Duration = .seconds(10)
        /// After each connection's snapshot, this long an activity whose condition turns false is kept, not ended:
        /// while Home Assistant starts, sensors read unavailable, unknown or 0 until their integrations load
        /// (a minute or two on a busy install). 0: no grace.
        public var restartGrace: Duration = .seconds(120)
    }

    public struct Backend: Sendable {
        public let name: String
        public let kind: BackendKind
        /// Aivi, PushWard or ActivitySmith token, or Island Pulse unique id; never printed.
        public let token: AccessToken?
        public let baseURL: String?
        /// Island Pulse tier: free keeps one active job per token and the default layout.
        public let freeTier: Bool
        /// Home Assistant: the notify services, e.g. `notify.mobile_app_my_iphone`; one target per service (a
        /// family's phones).
        public var services: [String]
        /// ActivitySmith: the channels a stream goes to (none: the API key's scope decides).
        public var channels: [String] = []
        public let location: SourceLocation

        /// The first notify service (Home Assistant), for what goes to one phone only.
        public var service: String? { services.first }

        /// The same backend, wherever it is written in the file.
        public func isSame(as other: Backend) -> Bool {
            (name, kind, token, baseURL, freeTier, services) == (other.name, other.kind, other.token, other.baseURL, other.freeTier, other.services)
                && channels == other.channels
        }
    }

    /// Where the status listener serves /healthz, /metrics and /activities; nil: off.
    public struct StatusListener: Sendable, Equatable {
        public let host: String
        public let port: Int

        /// `HOST:PORT`, or a bare `PORT` on 127.0.0.1; nil for anything else. Port 0 takes a free port when the
        /// listener starts, named by the log's `status listener` line (a port picked beforehand may be taken by
        /// another program, or another connection's own end, before the daemon listens on it).
        public init?(parsing text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 2, !parts[0].isEmpty, let port = Self.port(parts[1]) {
                (host, self.port) = (String(parts[0]), port)
            } else if parts.count == 1, let port = Self.port(parts[0]) {
                (host, self.port) = ("127.0.0.1", port)
            } else {
                return nil
            }
        }

        /// 0–65535 written in ASCII digits only (`Int` also reads `-0` and `+80`).
        private static func port(_ text: Substring) -> Int? {
            guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let port = Int(text), port <= 65535 else { return nil }
            return port
        }
    }

    public let path: String
    public let status: StatusListener?
    /// The Home Assistant event blueprints fire (`livebridge_activity` unless `events: {type: …}` says otherwise).
    public let eventType: String
    /// How many activities events may show at once (`events.max_activities`): each is a lane and a state entry while
    /// it lasts, so a flood of made-up ids is refused past it.
    public var eventActivityLimit = RulesFile.defaultEventActivityLimit
    public static let defaultEventActivityLimit = 20
    public let homeAssistant: HomeAssistantSettings?
    public let backends: [String: Backend]
    public let defaultBackend: String?
    public let budget: UpdateBudget
    public let activities: [ActivityRule]
    /// Warnings and coercions found at load, for `check`.
    public var notes = RuleNotes()

    /// Whether a URL names this machine (127.0.0.0/8, ::1 or localhost).
    static func isLoopback(_ url: String) -> Bool {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let rest = parts[1]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host: Substring
        if authority.hasPrefix("[") { host = authority.dropFirst().prefix { $0 != "]" } } else { host = authority.prefix { $0 != ":" } }
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// What keeps `run` from running this file, though `render` and `preview` can use it: `check` reports the same,
    /// so it says OK only for a file `run` will run.
    /// A backend token still holding suggest's placeholder is one too: it would go to the real service.
    public var problemsForRun: [ConfigError] {
        var problems = backends.values.sorted { $0.name < $1.name }.compactMap { backend -> ConfigError? in
            guard let token = backend.token?.secret, Proposal.isPlaceholder(token) else { return nil }
            // A backend pointed at this machine (the preview server) sends the placeholder nowhere real.
            if let base = backend.baseURL, Self.isLoopback(base) { return nil }
            return ConfigError(backend.location, path: "backends.\(backend.name).token",
                               "still holds livebridge suggest's placeholder (replace-with-your-…): put the real token in secrets.yaml")
        }
        if homeAssistant == nil {
            problems.append(ConfigError(SourceLocation(file: path, line: 1, column: 1), path: "homeassistant",
                                        "is required to run (url and token; as a Home Assistant add-on, $SUPERVISOR_TOKEN stands for both); render and preview work without it"))
        }
        return problems
    }

    /// Every entity any rule reads: exactly what the connection subscribes to.
    public var entityIDs: Set<String> { activities.reduce(into: []) { $0.formUnion($1.entityIDs) } }

    /// The text of every template Home Assistant renders, once each, sorted: what LiveBridge subscribes to with
    /// `render_template`.
    public var templatesRenderedByHomeAssistant: [String] {
        Set(activities.flatMap { $0.fieldsRenderedByHomeAssistant.map(\.template.source) }).sorted()
    }

    /// The same with the domains and the every-entity reads: what the connection keeps.
    public var reads: EntitySelection { .combining(activities.map(\.reads)) }
}
