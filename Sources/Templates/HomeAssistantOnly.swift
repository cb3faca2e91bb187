/// What Home Assistant's templates offer that LiveBridge's engine does not compute: its registries (areas, floors,
/// devices, labels, integrations, config entries), translations, repairs, and a few functions of Home Assistant's
/// own. A template using one is rendered by Home Assistant itself, through the WebSocket `render_template`
/// subscription, which pushes a new result whenever what the template reads changes.
enum HomeAssistantOnly {
    /// Functions and filters that read Home Assistant's registries.
    static let registryNames: Set<String> = [
        "area_id", "area_name", "area_entities", "area_devices", "areas",
        "floors", "floor_id", "floor_name", "floor_areas", "floor_entities",
        "labels", "label_id", "label_name", "label_description", "label_areas", "label_devices", "label_entities",
        "device_attr", "device_entities", "device_id", "device_name", "is_device_attr",
        "integration_entities", "config_entry_attr", "config_entry_id",
        "is_hidden_entity", "entity_name",
    ]

    /// The others, and what they need.
    static let otherNames: [String: String] = [
        "state_translated": "Home Assistant's translations",
        "state_attr_translated": "Home Assistant's translations",
        "issues": "Home Assistant's repairs", "issue": "Home Assistant's repairs",
        "pack": "Home Assistant's library", "unpack": "Home Assistant's library",
        "version": "Home Assistant's library",
    ]

    /// Why Home Assistant must render a template that uses `name`; nil when the local engine can (or the name is
    /// not Home Assistant's either: then it is a mistake, reported at load).
    static func reason(for name: String) -> String? {
        if registryNames.contains(name) { return "\(name) reads Home Assistant's registries" }
        if let what = otherNames[name] { return "\(name) needs \(what)" }
        return nil
    }
}
