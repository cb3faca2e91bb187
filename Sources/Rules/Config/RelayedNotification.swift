public import JSON
import LiveActivity

/// Home Assistant's `call_service` event for a notification to a phone LiveBridge shows activities on: whether it
/// spends that phone's relay quota for someone else. Core fires the event for every service call; LiveBridge's own
/// (a tag of its own on that phone) are counted where they are sent, plain commands are free.
public enum RelayedNotification {
    public static let eventType = "call_service"

    /// The tags LiveBridge uses on each Home Assistant notify service of the rules.
    public static func ownTags(in rules: RulesFile) -> [String: Set<String>] {
        var tags: [String: Set<String>] = [:]
        for rule in rules.activities {
            for target in rule.targets where target.kind.definition.spendsRelay {
                if let service = target.service { tags[service, default: []].insert(target.id) }
            }
        }
        return tags
    }

    /// The notify service whose quota the event's call spends for another sender, or nil.
    public static func countedDevice(_ event: JSONValue, ownTags: [String: Set<String>]) -> String? {
        let data = event["data"] ?? .null
        guard data["domain"]?.stringValue == "notify", let name = data["service"]?.stringValue else { return nil }
        let device = "notify." + name
        guard let ours = ownTags[device] else { return nil }
        let serviceData = data["service_data"] ?? .null
        if let tag = serviceData["data"]?["tag"]?.stringValue, ours.contains(tag) { return nil }
        let message = serviceData["message"]?.stringValue
        if let message, plainCommands.contains(message) || message.hasPrefix("command_") || message.hasPrefix("request_location_update") {
            return nil
        }
        return device
    }

    /// Messages the companion app takes as commands: the relay sends them without counting.
    static let plainCommands: Set<String> = ["clear_notification", "clear_badge", "update_complications", "update_widgets",
                                             "remove_channel"]
}
