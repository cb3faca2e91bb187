import JSON

/// Home Assistant's word that the user swiped a Live Activity away (core 2026.7+, companion app 2026.7+): the app
/// calls its `live_activity_dismissed` webhook, core forgets the activity's push token and fires this event with the
/// activity's `tag`, the `device_id` and the `device_name`. An update after it would reach no activity (core has no
/// token) or open a new one through push-to-start, so LiveBridge sends nothing more to that target until its next start.
public enum LiveActivityDismissal {
    public static let eventType = "mobile_app_live_activity_dismissed"

    /// The Home Assistant targets the event names: the tag on the phone whose notify service is
    /// `notify.mobile_app_<device name, slugified as Home Assistant names the service>`.
    public static func targets(in rules: RulesFile, event data: JSONValue) -> [(activity: String, target: String)] {
        guard let tag = data["tag"]?.stringValue, let device = data["device_name"]?.stringValue,
              let slug = try? Slug.make(.string(device), separator: "_") else { return [] }
        let service = "notify.mobile_app_" + slug
        return rules.activities.flatMap { rule in
            rule.targets.filter { $0.kind == .homeassistant && $0.id == tag && $0.service == service }.map { (rule.id, $0.name) }
        }
    }

    /// Whether any rule shows an activity through Home Assistant (only then is the event followed).
    public static func isFollowed(by rules: RulesFile) -> Bool {
        rules.activities.contains { $0.targets.contains { $0.kind == .homeassistant } }
    }
}
