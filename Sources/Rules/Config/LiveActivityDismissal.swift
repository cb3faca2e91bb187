public import JSON
import Templates
import LiveActivity

/// Home Assistant's word that the user swiped a Live Activity away: the app calls its `live_activity_dismissed`
/// webhook and core forgets the activity's push token. Core 2026.7.0–2026.11.0 fire no event for it; core's
/// development branch fires this one (`tag`, `device_id`, `device_name`), which LiveBridge follows so it stops the
/// moment a release ships it. Until then the next update after a swipe becomes a push-to-start (core has no token
/// and sends the start token): the activity comes back — the README says so. With the event, nothing more goes to that
/// target until the activity's next start.
public enum LiveActivityDismissal {
    public static let eventType = "mobile_app_live_activity_dismissed"

    /// The Home Assistant targets the event names: the tag on the phone whose notify service is
    /// `notify.mobile_app_<device name, slugified as Home Assistant names the service>`.
    /// `services`: each phone's notify service by its device id (from the device registry), which the event names
    /// too; the device's name is used when the id is not known.
    public static func targets(in rules: RulesFile, event data: JSONValue, services: [String: String] = [:]) -> [(activity: String, target: String)] {
        guard let tag = data["tag"]?.stringValue else { return [] }
        let service: String
        if let id = data["device_id"]?.stringValue, let known = services[id] {
            service = known
        } else {
            guard let device = data["device_name"]?.stringValue, let slug = try? Slug.make(.string(device), separator: "_") else { return [] }
            service = "notify.mobile_app_" + slug
        }
        return rules.activities.flatMap { rule in
            rule.targets.filter { $0.kind.definition.spendsRelay && $0.id == tag && $0.service == service }.map { (rule.id, $0.name) }
        }
    }

    /// Each companion app's notify service by its device id, from the device registry's list: the service is named
    /// after the device (`notify.mobile_app_<name, slugified>`).
    public static func services(devices: JSONValue) -> [String: String] {
        var services: [String: String] = [:]
        for device in devices.arrayValue ?? [] {
            guard let id = device["id"]?.stringValue,
                  device["identifiers"]?.arrayValue?.contains(where: { $0.arrayValue?.first?.stringValue == "mobile_app" }) == true,
                  let name = device["name_by_user"]?.stringValue ?? device["name"]?.stringValue,
                  let slug = try? Slug.make(.string(device["name"]?.stringValue ?? name), separator: "_") else { continue }
            services[id] = "notify.mobile_app_" + slug
        }
        return services
    }

    /// Whether any rule shows an activity through Home Assistant (only then is the event followed).
    public static func isFollowed(by rules: RulesFile) -> Bool {
        rules.activities.contains { $0.targets.contains { $0.kind.definition.spendsRelay } }
    }
}
