public import HomeAssistant
import JSON

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

    /// Common Material Design icons Home Assistant users write, by exact name → SF Symbols (before the word match).
    static let mdiNames: [String: String] = [
        "check": "checkmark", "check-circle": "checkmark.circle", "check-circle-outline": "checkmark.circle", "close": "xmark",
        "alert": "exclamationmark.triangle", "alert-circle": "exclamationmark.circle", "alert-circle-outline": "exclamationmark.circle",
        "information": "info.circle", "information-outline": "info.circle", "pause": "pause", "pause-circle": "pause.circle",
        "play": "play", "play-circle": "play.circle", "stop": "stop", "power": "power", "heart": "heart", "star": "star",
        "account": "person", "account-multiple": "person.2", "map-marker": "mappin", "calendar": "calendar", "weather-sunny": "sun.max",
        "weather-night": "moon", "weather-rainy": "cloud.rain", "snowflake": "snowflake", "leaf": "leaf", "sprout": "leaf",
        "flower": "camera.macro", "shower": "shower", "bathtub": "bathtub", "bed": "bed.double", "sofa": "sofa", "iron": "tshirt",
        "tshirt-crew": "tshirt", "hanger": "tshirt", "progress-clock": "clock.arrow.circlepath", "update": "arrow.triangle.2.circlepath",
        "download": "arrow.down.circle", "upload": "arrow.up.circle", "cellphone": "iphone", "laptop": "laptopcomputer",
        "router-wireless": "wifi.router", "wifi": "wifi", "server": "server.rack", "database": "cylinder", "cloud": "cloud",
        "cog": "gearshape", "wrench": "wrench", "hammer": "hammer", "gauge": "gauge.medium", "speedometer": "speedometer",
        "cash": "banknote", "currency-eur": "eurosign", "currency-usd": "dollarsign", "cart": "cart", "food": "fork.knife",
        "silverware-fork-knife": "fork.knife", "pot-steam": "frying.pan", "fridge": "refrigerator", "pool": "figure.pool.swim",
        "run": "figure.run", "walk": "figure.walk", "bike": "bicycle", "bus": "bus", "train": "tram", "airplane": "airplane",
    ]

    /// The SF Symbol drawn for a Material Design icon (`mdi:timer-outline` → `timer`), or nil when none is known.
    public static func symbol(forMDI icon: String) -> String? {
        guard icon.hasPrefix("mdi:") else { return nil }
        let name = String(icon.dropFirst(4))
        if let exact = mdiNames[name] { return exact }
        let bare = name.hasSuffix("-outline") ? String(name.dropLast("-outline".count)) : name
        if let exact = mdiNames[bare] { return exact }
        return mdiWords.first(where: { name.contains($0.0) })?.1
    }

    public static func symbol(for state: EntityState) -> String? {
        if let icon = state.attribute("icon")?.stringValue, let symbol = symbol(forMDI: icon) { return symbol }
        if let deviceClass = state.attribute("device_class")?.stringValue, let symbol = deviceClasses[deviceClass] {
            return symbol
        }
        let domain = String(state.entityID.split(separator: ".").first ?? "")
        return domains[domain]
    }
}
