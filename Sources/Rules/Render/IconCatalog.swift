import HomeAssistant

/// `icon: auto`: an SF Symbol for an entity, from its `mdi:` icon, else its device_class, else its domain.
public enum IconCatalog {
    /// Words found in mdi icon names → SF Symbols; the first match wins, so specific words come first.
    static let mdiWords: [(String, String)] = [
        ("washing-machine", "washer"), ("tumble-dryer", "dryer"), ("dishwasher", "dishwasher"),
        ("robot-vacuum", "robotic.vacuum"), ("vacuum", "robotic.vacuum"), ("robot-mower", "leaf"),
        ("ev-station", "bolt.car"), ("car-electric", "bolt.car"), ("ev-plug", "ev.plug.dc.ccs1"), ("car", "car"),
        ("battery-charging", "battery.100.bolt"), ("battery", "battery.75"), ("timer", "timer"), ("clock", "clock"),
        ("thermometer", "thermometer.medium"), ("thermostat", "thermometer.medium"), ("water-boiler", "drop.fill"),
        ("door", "door.left.hand.closed"), ("garage", "door.garage.closed"), ("lock", "lock"), ("lightbulb", "lightbulb"),
        ("lamp", "lamp.table"), ("printer-3d", "printer.filled.and.paper"), ("printer", "printer"), ("stove", "stove"),
        ("oven", "oven"), ("microwave", "microwave"), ("coffee", "cup.and.saucer"), ("kettle", "cup.and.saucer"),
        ("fan", "fan"), ("air-conditioner", "air.conditioner.horizontal"), ("solar", "sun.max"), ("flash", "bolt"),
        ("lightning-bolt", "bolt"), ("water", "drop"), ("fire", "flame"), ("bell", "bell"), ("package", "shippingbox"),
        ("trash", "trash"), ("dog", "pawprint"), ("cat", "pawprint"), ("television", "tv"), ("speaker", "hifispeaker"),
        ("music", "music.note"), ("camera", "video"), ("motion", "figure.walk"), ("home", "house"),
    ]

    static let deviceClasses: [String: String] = [
        "battery": "battery.75", "temperature": "thermometer.medium", "humidity": "humidity", "power": "bolt",
        "energy": "bolt", "door": "door.left.hand.closed", "garage_door": "door.garage.closed", "lock": "lock",
        "moisture": "drop", "motion": "figure.walk", "occupancy": "person", "timestamp": "clock", "duration": "timer",
        "window": "window.vertical.closed", "smoke": "smoke", "gas": "flame", "problem": "exclamationmark.triangle",
        "plug": "powerplug", "light": "lightbulb", "running": "play.circle", "update": "arrow.down.circle",
    ]

    static let domains: [String: String] = [
        "timer": "timer", "vacuum": "robotic.vacuum", "light": "lightbulb", "lock": "lock", "climate": "thermometer.medium",
        "cover": "blinds.horizontal.closed", "media_player": "play.rectangle", "fan": "fan", "switch": "power",
        "lawn_mower": "leaf", "water_heater": "drop.fill", "update": "arrow.down.circle", "camera": "video",
    ]

    public static func symbol(for state: EntityState) -> String? {
        if let icon = state.attribute("icon")?.stringValue, icon.hasPrefix("mdi:") {
            let name = String(icon.dropFirst(4))
            if let match = mdiWords.first(where: { name.contains($0.0) }) { return match.1 }
        }
        if let deviceClass = state.attribute("device_class")?.stringValue, let symbol = deviceClasses[deviceClass] {
            return symbol
        }
        let domain = String(state.entityID.split(separator: ".").first ?? "")
        return domains[domain]
    }
}
