public import HomeAssistant
import JSON
import Templates

/// Finds what people put on their Lock Screen among Home Assistant's states: washers, dryers, dishwashers and 3D
/// printers (a status, progress, remaining time or power sensor sharing a name), EV charging (a battery and a charging
/// sensor), timers, robot vacuums and media players. With the registries (`DeviceDirectory`), an appliance's
/// sensors are the ones on one device, whatever their names, and it is named as the device is and placed in its area.
/// Pure: states in, appliances out, in a stable order.
public enum ApplianceRecognizer {
    /// Which part of an appliance an entity is, by the end of its object id.
    enum Role: CaseIterable {
        case status, progress, remaining, power, battery, charging

        /// Longest first within a role; the suffix is cut off to find the appliance's shared name.
        var suffixes: [String] {
            switch self {
            case .status: ["_operation_state", "_machine_state", "_program_phase", "_current_status", "_print_status", "_job_state",
                           "_run_state", "_status", "_state", "_running", "_printing", "_cleaning", "_active"]
            case .progress: ["_print_progress", "_job_percentage", "_program_progress", "_completion", "_percentage", "_progress"]
            case .remaining: ["_estimated_finish_time", "_remaining_program_time", "_program_finish_time", "_completion_time",
                              "_remaining_time", "_time_remaining", "_finish_time", "_minutes_left", "_time_left", "_end_time",
                              "_remaining", "_finishes_at"]
            case .power: ["_current_power", "_power_consumption", "_power"]
            case .battery: ["_battery_level", "_state_of_charge", "_battery", "_soc"]
            case .charging: ["_charging", "_is_charging", "_charger_connected"]
            }
        }
    }

    /// States that mean "not running" whatever the integration; running is anything else.
    static let idleStates = ["idle", "off", "standby", "ready", "finished", "done", "end", "ended", "complete", "completed",
                             "inactive", "stopped", "paused", "pause", "sleep", "sleeping", "offline", "error", "unavailable",
                             "unknown", "none", ""]

    static let keywords: [(Appliance.Kind, [String])] = [
        (.dishwasher, ["dishwasher", "dish_washer", "geschirrspuler", "geschirrspueler", "spulmaschine", "lave_vaisselle", "lavastoviglie"]),
        (.dryer, ["dryer", "tumble", "trockner", "secadora", "seche_linge", "asciugatrice"]),
        (.washer, ["washer", "washing_machine", "waschmaschine", "lave_linge", "lavatrice", "lavadora"]),
        (.printer, ["printer", "3d_print", "octoprint", "prusa", "bambu", "klipper", "moonraker", "mainsail", "fluidd", "ender",
                    "voron", "creality", "x1c", "p1s", "p1p", "a1_mini", "_print"]),
        (.evCharging, ["ev", "car", "tesla", "charger", "wallbox", "vehicle", "easee", "zappi", "ohme"]),
    ]

    /// At most this many media players: every speaker and TV is one, and few are worth a Live Activity.
    static let mediaPlayerLimit = 3

    /// Sensors that make one appliance: sharing a device, or else a name before their role's suffix.
    struct Group {
        /// The activity's id: the shared name, or the device's name slugified.
        var key: String
        var device: DeviceDirectory.Device?
        var members: [Role: EntityState] = [:]
    }

    public static func recognise(_ states: [String: EntityState], directory: DeviceDirectory = .empty) -> [Appliance] {
        var appliances: [Appliance] = []
        var groups: [String: Group] = [:]
        var mediaPlayers: [EntityState] = []
        for state in states.values.sorted(by: { $0.entityID < $1.entityID }) {
            guard let id = parts(state.entityID) else { continue }
            switch id.domain {
            case "timer":
                appliances.append(Appliance(kind: .timer, id: id.objectID, name: name(state, key: id.objectID),
                                            running: .states(state.entityID, ["active"]),
                                            remaining: .attribute(state.entityID, "finishes_at"), entity: state.entityID,
                                            area: directory[state.entityID]?.area))
            case "vacuum":
                appliances.append(Appliance(kind: .vacuum, id: id.objectID, name: name(state, key: id.objectID),
                                            running: .states(state.entityID, ["cleaning", "returning"]), entity: state.entityID,
                                            area: directory[state.entityID]?.area))
            case "media_player":
                if state.state != "unavailable" { mediaPlayers.append(state) }
            case "sensor", "binary_sensor", "input_number":
                guard let (key, role) = role(of: state, objectID: id.objectID, domain: id.domain) else { continue }
                let device = directory[state.entityID]?.device
                let group = device.map { "device \($0.id)" } ?? key
                if groups[group]?.members[role] == nil {
                    groups[group, default: Group(key: device.map { slug($0.name) } ?? key, device: device)].members[role] = state
                }
            default: break
            }
        }
        for group in groups.values.sorted(by: { ($0.key, $0.device?.id ?? "") < ($1.key, $1.device?.id ?? "") }) {
            guard var appliance = appliance(group) else { continue }
            appliance.area = appliance.entities.lazy.compactMap { directory[$0]?.area }.first
            appliances.append(appliance)
        }
        // Playing ones first, then by id.
        let playingFirst = mediaPlayers.filter { $0.state == "playing" } + mediaPlayers.filter { $0.state != "playing" }
        for state in playingFirst.prefix(mediaPlayerLimit) {
            let objectID = parts(state.entityID)!.objectID
            appliances.append(Appliance(kind: .mediaPlayer, id: objectID, name: name(state, key: objectID),
                                        running: .states(state.entityID, ["playing"]), entity: state.entityID,
                                        area: directory[state.entityID]?.area))
        }
        return uniqueIDs(appliances)
    }

    /// A valid entity id's domain and object id.
    static func parts(_ entityID: String) -> (domain: String, objectID: String)? {
        guard EntityID.isValid(entityID), let dot = entityID.firstIndex(of: ".") else { return nil }
        return (String(entityID[..<dot]), String(entityID[entityID.index(after: dot)...]))
    }

    /// The appliance's shared name and the entity's part in it, from its object id's end or its device class.
    static func role(of state: EntityState, objectID: String, domain: String) -> (String, Role)? {
        let deviceClass = state.attribute("device_class")?.stringValue
        if domain == "binary_sensor", deviceClass == "battery_charging" {
            return (strip(objectID, Role.charging.suffixes), .charging)
        }
        for role in Role.allCases {
            for suffix in role.suffixes where objectID.hasSuffix(suffix) && objectID.count > suffix.count {
                let key = String(objectID.dropLast(suffix.count))
                // A battery in percent is not a progress; a progress is in percent (or a bare 0–100 helper).
                if role == .progress, deviceClass == "battery" { return (key, .battery) }
                if role == .charging, domain != "binary_sensor" { return (key, .status) }
                return (key, role)
            }
        }
        switch deviceClass {
        case "power" where domain == "sensor": return (strip(objectID, ["_power"]), .power)
        case "battery" where domain == "sensor": return (strip(objectID, ["_battery"]), .battery)
        default: return nil
        }
    }

    static func strip(_ objectID: String, _ suffixes: [String]) -> String {
        for suffix in suffixes where objectID.hasSuffix(suffix) && objectID.count > suffix.count { return String(objectID.dropLast(suffix.count)) }
        return objectID
    }

    static func kind(_ group: Group) -> Appliance.Kind? {
        let members = group.members
        let names = [group.key, group.device?.name, group.device?.model].compactMap { $0 }
        let words = (names + members.values.compactMap { $0.attribute("friendly_name")?.stringValue })
            .map { $0.lowercased().replacing(" ", with: "_") }
        let tokens = Set(words.flatMap { $0.split(separator: "_").map(String.init) })
        for (kind, names) in keywords {
            // Short words (ev, car) must be a whole word: "every_switch" is not an EV.
            if names.contains(where: { name in name.count <= 3 ? tokens.contains(name) : words.contains { $0.contains(name) } }) {
                if kind == .evCharging, members[.battery] == nil { continue }
                return kind
            }
        }
        if members[.battery] != nil, members[.charging] != nil { return .evCharging }
        return nil
    }

    static func appliance(_ group: Group) -> Appliance? {
        let (key, members) = (group.key, group.members)
        guard let kind = kind(group) else { return nil }
        var running: Appliance.Running?
        if let status = members[.status] ?? (kind == .evCharging ? members[.charging] : nil) {
            running = runningCondition(status, charging: kind == .evCharging)
        } else if let power = members[.power] {
            running = .power(power.entityID, watts: kind == .printer ? 20 : 5)
        } else if let progress = members[.progress] {
            running = .progressBetween(progress.entityID)
        }
        guard let running else { return nil }
        var remaining: Appliance.Remaining?
        if let entity = members[.remaining] {
            if entity.attribute("device_class")?.stringValue == "timestamp" || entity.entityID.hasSuffix("_time") && entity.attribute("unit_of_measurement") == nil {
                remaining = .finishesAt(entity.entityID)
            } else {
                remaining = .amount(entity.entityID, unit: entity.attribute("unit_of_measurement")?.stringValue ?? "min")
            }
        }
        let named = [Role.status, .progress, .power, .battery, .charging, .remaining].compactMap { members[$0] }
            .first { $0.attribute("friendly_name")?.stringValue?.isEmpty == false }
        return Appliance(kind: kind, id: key, name: group.device?.name ?? named.map { name($0, key: key) } ?? humanised(key), running: running,
                         progress: members[.progress]?.entityID, remaining: remaining, battery: members[.battery]?.entityID)
    }

    /// A binary sensor runs when on; an enum sensor in its options that are not idle; anything else when not idle.
    static func runningCondition(_ status: EntityState, charging: Bool) -> Appliance.Running {
        if status.entityID.hasPrefix("binary_sensor.") { return .states(status.entityID, ["on"]) }
        if charging { return .states(status.entityID, ["charging"]) }
        if case .array(let options)? = status.attribute("options") {
            let running = options.compactMap(\.stringValue).filter { !idleStates.contains($0.lowercased()) }
            if !running.isEmpty { return .states(status.entityID, running) }
        }
        return .notStates(status.entityID, idleStates)
    }

    /// The friendly name without the role's words ("Washer status" → "Washer"), or the humanised key.
    static func name(_ state: EntityState, key: String) -> String {
        guard var name = state.attribute("friendly_name")?.stringValue, !name.isEmpty else { return humanised(key) }
        for role in Role.allCases {
            for suffix in role.suffixes {
                let words = " " + String(suffix.dropFirst()).replacing("_", with: " ")
                if name.lowercased().hasSuffix(words), name.count > words.count { name = String(name.dropLast(words.count)); break }
            }
        }
        return name
    }

    /// A device's name as an activity id, the way Home Assistant makes entity ids from names.
    static func slug(_ name: String) -> String {
        (try? Slug.make(.string(name), separator: "_")) ?? "unknown"
    }

    static func humanised(_ key: String) -> String {
        let words = key.replacing("_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// Two appliances with one id (a timer and a sensor group both `laundry`) get `_2`, `_3`.
    static func uniqueIDs(_ appliances: [Appliance]) -> [Appliance] {
        var seen: [String: Int] = [:]
        return appliances.map { appliance in
            var copy = appliance
            let count = seen[appliance.id, default: 0] + 1
            seen[appliance.id] = count
            if count > 1 { copy.id += "_\(count)" }
            return copy
        }
    }
}
