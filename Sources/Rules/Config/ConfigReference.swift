public import LiveActivity

/// Every key a rules file may hold, where the loader checks them: the README's configuration reference is tested
/// against this, so an undocumented key fails the suite.
public enum ConfigReference {
    public static let topLevelKeys = ["homeassistant", "backends", "defaults", "status", "events", "activities"]
    public static let eventsKeys = ["type", "max_activities"]
    public static let homeAssistantKeys = ["url", "token", "ca_file", "allow_self_signed", "entity_source", "ping_interval", "pong_timeout", "restart_grace"]
    public static var backendKeys: [BackendKind: [String]] {
        Dictionary(uniqueKeysWithValues: shipped.map { ($0, $0.definition.configKeys) })
    }

    /// The services LiveBridge ships with (not one a test registers for a while).
    static var shipped: [BackendKind] { BackendDefinition.builtInServices.map { $0.definition.kind } }
    public static let defaultsKeys = ["backend", "debounce", "max_wait", "min_interval", "max_updates_per_hour", "start_settle", "renew_after"]
    public static let statusKeys = ["listen"]
    public static var activityKeys: [String] { ActivityDecoder.ruleKeys }

    /// The payload fields a rule may give, per template and backend kind.
    public static var templateFields: [String: [String]] {
        var fields: [String: [String]] = [:]
        for kind in shipped {
            for template in kind.definition.templates {
                if let schema = kind.rendering.schema(template: template) { fields[kind.rawValue + " " + template] = schema.names }
            }
        }
        return fields
    }

    /// Every key, each once.
    public static var allKeys: Set<String> {
        var keys = Set(topLevelKeys + homeAssistantKeys + defaultsKeys + statusKeys + eventsKeys + activityKeys)
        for list in backendKeys.values { keys.formUnion(list) }
        for list in templateFields.values { keys.formUnion(list) }
        return keys
    }
}
