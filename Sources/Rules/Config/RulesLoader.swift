import Platform
public import FoundationEssentials
import HomeAssistant
import LiveActivity

/// Loads and checks a rules file, reporting every error at once with file:line:column and the path of keys.
public enum RulesLoader {
    /// `secretsOptional`: for commands that push nothing, missing secrets read as placeholders (`YAMLLoader`).
    public static func load(file: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                            secretsOptional: Bool = false) -> Result<RulesFile, ConfigErrors> {
        if let text = FileManager.default.contents(atPath: file).map({ String(decoding: $0, as: UTF8.self) }),
           let unread = Proposal.markerError(in: text, file: file) {
            return .failure(ConfigErrors([unread]))
        }
        var yaml = YAMLLoader(environment: environment, secretsOptional: secretsOptional)
        return decode(yaml.load(file: file), file: file, supervisor: SupervisorAccess(environment: environment))
    }

    /// Loads rules from `text` as if it were the file `file` (includes and secrets resolve beside it).
    public static func load(text: String, file: String, environment: [String: String] = [:]) -> Result<RulesFile, ConfigErrors> {
        var yaml = YAMLLoader(environment: environment)
        return decode(yaml.load(text: text, file: file), file: file, supervisor: SupervisorAccess(environment: environment))
    }

    private static func decode(_ loaded: (YAMLNode?, [ConfigError]), file: String, supervisor: SupervisorAccess?) -> Result<RulesFile, ConfigErrors> {
        let (root, yamlErrors) = loaded
        var errors = yamlErrors
        guard let root else {
            if errors.isEmpty { errors.append(ConfigError(SourceLocation(file: file, line: 1, column: 1), path: "", "the file is empty")) }
            return .failure(ConfigErrors(errors))
        }
        let decoded = decode(root, file: file, supervisor: supervisor, errors: &errors)
        // Whatever a message quotes, a value from !secret or !env_var shows as its name.
        let secrets = SecretValues(root)
        guard errors.isEmpty, var rules = decoded else { return .failure(ConfigErrors(errors.map(secrets.hiding).sortedByPosition())) }
        rules.notes = secrets.hiding(rules.notes)
        return .success(rules)
    }

    static let topLevelKeys = ConfigReference.topLevelKeys

    /// `supervisor`: set when running as a Home Assistant add-on; a file that names no Home Assistant then reaches it
    /// through the Supervisor.
    static func decode(_ root: YAMLNode, file: String, supervisor: SupervisorAccess?, errors: inout [ConfigError]) -> RulesFile? {
        guard let top = MappingReader(root, path: "", errors: &errors) else { return nil }
        // An activity's key written at the top level fell out of the activity above it (indented too little).
        let activityEntries = top["activities"].flatMap { node -> [(key: YAMLNode, value: YAMLNode)]? in
            if case .mapping(let entries) = node.kind { entries } else { nil }
        } ?? []
        var dedented: [String] = []
        for key in top.pairs.map(\.key) {
            guard let name = key.scalar, !topLevelKeys.contains(name), ActivityDecoder.isActivityKey(name) else { continue }
            dedented.append(name)
            errors.append(ConfigError(key.location, path: name, Dedent.message(key: name, at: key.location, activities: activityEntries)))
        }
        top.rejectUnknown(allowed: topLevelKeys + dedented, errors: &errors)

        let homeAssistant = top["homeassistant"].map { decodeHomeAssistant($0, supervisor: supervisor, errors: &errors) }
            ?? supervisor?.settings
        var backends: [String: RulesFile.Backend] = [:]
        if let node = top["backends"], let reader = MappingReader(node, path: "backends", errors: &errors) {
            for (key, value) in reader.pairs {
                guard let name = key.scalar else { continue }
                if let backend = decodeBackend(name, value, errors: &errors) { backends[name] = backend }
            }
        }
        var budget = UpdateBudget.rulesDefault
        var defaultBackend: String?
        if let node = top["defaults"], let reader = MappingReader(node, path: "defaults", errors: &errors) {
            reader.rejectUnknown(allowed: ConfigReference.defaultsKeys, errors: &errors)
            budget = decodeBudget(reader, base: budget, errors: &errors)
            if let name = reader.string("backend", errors: &errors) {
                if backends[name] == nil {
                    errors.append(ConfigError(reader["backend"]!.location, path: "defaults.backend", unknownBackend(name, backends)))
                } else {
                    defaultBackend = name
                }
            }
        }
        if defaultBackend == nil && backends.count == 1 { defaultBackend = backends.keys.first }

        var activities: [ActivityRule] = []
        var notes = RuleNotes()
        if let node = top["activities"], let reader = MappingReader(node, path: "activities", errors: &errors) {
            for (key, value) in reader.pairs {
                guard let id = key.scalar else { continue }
                if value.scalar != nil || value.isNull, ActivityDecoder.isActivityKey(id) {
                    errors.append(ConfigError(key.location, path: "activities." + id,
                                              Dedent.message(key: id, at: key.location, activities: reader.pairs)))
                    continue
                }
                if let rule = ActivityDecoder.decode(id: id, value, backends: backends, defaultBackend: defaultBackend,
                                                     budget: budget, errors: &errors, notes: &notes) {
                    activities.append(rule)
                }
            }
            // Two activities on one slug / job_id / tag would fight over one Live Activity.
            var owners: [String: String] = [:]
            for rule in activities {
                for target in rule.targets {
                    let key = target.name + "\u{0}" + target.id
                    if let owner = owners[key] {
                        let idKey = target.kind.idKey
                        errors.append(ConfigError(rule.location, path: "activities.\(rule.id)",
                            "\(idKey) \"\(target.id)\" is already used by activity \(owner) on backend \(target.name); give one of them its own \(idKey)"))
                    } else {
                        owners[key] = rule.id
                    }
                }
            }
        } else if top["activities"] == nil {
            // Without activities LiveBridge can still serve blueprints through events.
        }
        var status: RulesFile.StatusListener?
        if let node = top["status"], let reader = MappingReader(node, path: "status", errors: &errors) {
            reader.rejectUnknown(allowed: ConfigReference.statusKeys, errors: &errors)
            if let listen = reader.string("listen", errors: &errors) {
                if let listener = RulesFile.StatusListener(parsing: listen) {
                    status = listener
                } else {
                    errors.append(ConfigError(reader["listen"]!.location, path: "status.listen", "\(reader.shown("listen")) is not HOST:PORT (e.g. 127.0.0.1:9321)"))
                }
            }
        }
        var eventType = "livebridge_activity"
        var eventActivityLimit = RulesFile.defaultEventActivityLimit
        if let node = top["events"], let reader = MappingReader(node, path: "events", errors: &errors) {
            if let node = reader["max_activities"] {
                if let text = node.scalar, let limit = Int(text), (1...500).contains(limit) { eventActivityLimit = limit } else {
                    errors.append(ConfigError(node.location, path: "events.max_activities", "\(node.quoted) is not a number of activities from 1 to 500"))
                }
            }
            reader.rejectUnknown(allowed: ConfigReference.eventsKeys, errors: &errors)
            if let type = reader.string("type", errors: &errors) {
                if type.isEmpty || type.contains(" ") {
                    errors.append(ConfigError(reader["type"]!.location, path: "events.type", "\(reader.shown("type")) is not an event type"))
                } else {
                    eventType = type
                }
            }
        }
        var rules = RulesFile(path: file, status: status, eventType: eventType, homeAssistant: homeAssistant, backends: backends,
                              defaultBackend: defaultBackend, budget: budget, activities: activities, notes: notes)
        rules.eventActivityLimit = eventActivityLimit
        return rules
    }

    static func decodeHomeAssistant(_ node: YAMLNode, supervisor: SupervisorAccess?, errors: inout [ConfigError]) -> RulesFile.HomeAssistantSettings? {
        guard let reader = MappingReader(node, path: "homeassistant", errors: &errors) else { return nil }
        reader.rejectUnknown(allowed: ConfigReference.homeAssistantKeys, errors: &errors)
        var settings: RulesFile.HomeAssistantSettings
        if reader["url"] == nil, reader["token"] == nil, let supervisor {
            // An add-on: Home Assistant through the Supervisor, with the token it gave.
            settings = supervisor.settings
        } else {
            guard let url = reader.string("url", errors: &errors) else {
                errors.append(ConfigError(node.location, path: "homeassistant.url", "is required"))
                return nil
            }
            do { _ = try ServerURL.endpoint(from: url) } catch let error as ServerURL.ParseError {
                errors.append(ConfigError(reader["url"]!.location, path: "homeassistant.url", error.reason))
            } catch {}
            guard let token = reader.string("token", errors: &errors), !token.isEmpty else {
                errors.append(ConfigError(node.location, path: "homeassistant.token", "is required (use !secret ha_token)"))
                return nil
            }
            settings = RulesFile.HomeAssistantSettings(url: url, token: AccessToken(token))
        }
        settings.caFile = reader.string("ca_file", errors: &errors)
        settings.allowSelfSigned = reader.bool("allow_self_signed", errors: &errors) ?? false
        if let source = reader.string("entity_source", errors: &errors) {
            if let parsed = ConnectionConfiguration.EntitySource(rawValue: source) {
                settings.entitySource = parsed
            } else {
                errors.append(ConfigError(reader["entity_source"]!.location, path: "homeassistant.entity_source",
                                          "unknown entity source \(reader.shown("entity_source")); expected subscribe_entities or state_changed"))
            }
        }
        if let grace = reader.duration("restart_grace", errors: &errors) { settings.restartGrace = grace }
        for (key, path) in [("ping_interval", \RulesFile.HomeAssistantSettings.pingInterval), ("pong_timeout", \.pongTimeout)] {
            guard let value = reader.duration(key, errors: &errors) else { continue }
            if value > .zero { settings[keyPath: path] = value } else {
                errors.append(ConfigError(reader[key]!.location, path: "homeassistant." + key, "must be longer than 0s"))
            }
        }
        return settings
    }

    static func decodeBackend(_ name: String, _ node: YAMLNode, errors: inout [ConfigError]) -> RulesFile.Backend? {
        let path = "backends." + name
        guard let reader = MappingReader(node, path: path, errors: &errors) else { return nil }
        guard let typeText = reader.string("type", errors: &errors) else {
            errors.append(ConfigError(node.location, path: path + ".type", "is required: " + BackendKind.allCases.map(\.rawValue).joined(separator: ", ")))
            return nil
        }
        guard let kind = BackendKind(rawValue: typeText) else {
            var message = "unknown backend type \(reader.shown("type"))"
            message += Suggestion.didYouMean(typeText, in: BackendKind.allCases.map(\.rawValue),
                                             otherwise: "; expected " + BackendKind.allCases.map(\.rawValue).joined(separator: ", "))
            errors.append(ConfigError(reader["type"]!.location, path: path + ".type", message))
            return nil
        }
        reader.rejectUnknown(allowed: kind.definition.configKeys, errors: &errors)
        let token = reader.string("token", errors: &errors)
        if kind.definition.needsToken, token?.isEmpty ?? true {
            errors.append(ConfigError(node.location, path: path + ".token", "is required (use !secret or !env_var)"))
        }
        if name.contains("/") || name.contains("@") {
            errors.append(ConfigError(reader.node.location, path: path, "a backend's name cannot hold \"/\" or \"@\" (they separate activity, backend and service in state.json)"))
        }
        var freeTier = false
        if let tier = reader.string("tier", errors: &errors) {
            switch tier {
            case "free": freeTier = true
            case "pro": freeTier = false
            default: errors.append(ConfigError(reader["tier"]!.location, path: path + ".tier", "unknown tier \(reader.shown("tier")); expected free or pro"))
            }
        }
        let baseURL = reader.string("base_url", errors: &errors)
        if let baseURL, !(baseURL.hasPrefix("https://") || baseURL.hasPrefix("http://")) {
            errors.append(ConfigError(reader["base_url"]!.location, path: path + ".base_url", "\(reader.shown("base_url")) must start with https:// or http://"))
        }
        var backend = RulesFile.Backend(name: name, kind: kind, token: token.map(AccessToken.init), baseURL: baseURL, freeTier: freeTier,
                                        services: [], location: node.location)
        kind.rendering.decodeBackend(reader, into: &backend, errors: &errors)
        return backend
    }

    static func decodeBudget(_ reader: MappingReader, base: UpdateBudget, errors: inout [ConfigError]) -> UpdateBudget {
        var budget = base
        if let d = reader.duration("debounce", errors: &errors) { budget.debounce = d }
        if let d = reader.duration("max_wait", errors: &errors) { budget.maxWait = d }
        if let d = reader.duration("min_interval", errors: &errors) { budget.minInterval = d }
        if let d = reader.duration("start_settle", errors: &errors) { budget.settle = d }
        if let node = reader["renew_after"] {
            if node.scalar == "never" { budget.renewAfter = nil } else if let d = reader.duration("renew_after", errors: &errors) {
                if d >= .seconds(1) && d <= UpdateBudget.defaultRenewAfter + .seconds(600) { budget.renewAfter = d } else {
                    errors.append(ConfigError(node.location, path: joinedPath(reader.path, "renew_after"),
                                              "must be between 1s and 8h (iOS ends an activity at eight hours), or never"))
                }
            }
        }
        if let node = reader["max_updates_per_hour"] {
            if let text = node.scalar, let cap = Int(text), cap >= 1, cap <= 3600 { budget.maxPerHour = cap } else if node.scalar == "unlimited" {
                budget.maxPerHour = nil
            } else {
                errors.append(ConfigError(node.location, path: joinedPath(reader.path, "max_updates_per_hour"),
                                          "\(node.quoted) is not a number of updates from 1 to 3600 (or unlimited)"))
            }
        }
        return budget
    }

    static func unknownBackend(_ name: String, _ backends: [String: RulesFile.Backend]) -> String {
        "no backend named \"\(name)\"" + Suggestion.didYouMean(name, in: backends.keys.sorted(),
                                                           otherwise: backends.isEmpty ? "; declare it under backends:" : "; declared: " + backends.keys.sorted().joined(separator: ", "))
    }
}

/// A key that belongs to an activity but is indented too little: where it fell out of.
enum Dedent {
    static func message(key: String, at location: SourceLocation, activities: [(key: YAMLNode, value: YAMLNode)]) -> String {
        let above = activities.last { entry in
            guard case .mapping = entry.value.kind else { return false }
            return entry.key.location.file == location.file && entry.key.location.line < location.line
        }
        guard let above, let id = above.key.scalar else {
            return "\"\(key)\" is a key of an activity: indent it under one, e.g. activities: → washer: → \(key):"
        }
        return "\"\(key)\" is a key of an activity, indented too little: it fell out of activity \(id) (line \(above.key.location.line)); "
            + "indent it like that activity's other keys"
    }
}

public extension [ConfigError] {
    func sortedByPosition() -> [ConfigError] {
        sorted { ($0.location.file, $0.location.line, $0.location.column) < ($1.location.file, $1.location.line, $1.location.column) }
    }
}
