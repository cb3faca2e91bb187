public import JSON

/// Where Home Assistant's registries put each entity: the device it belongs to and the area it is in. `suggest`
/// groups an appliance's entities by device (a washer's `sensor.wm_status` and `sensor.bosch_remaining` are one
/// washer), names it as the device is named, and says its area. Built from `config/entity_registry/list`,
/// `config/device_registry/list` and `config/area_registry/list`; an entity's own area overrides its device's, and a
/// device's `name_by_user` its `name`, as in Home Assistant.
public struct DeviceDirectory: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var id: String
        public var name: String
        public var model: String?
    }

    public struct Placement: Sendable, Equatable {
        public var device: Device?
        public var area: String?
    }

    /// No registries: every entity on its own, in no area.
    public static let empty = DeviceDirectory(placements: [:])

    let placements: [String: Placement]

    init(placements: [String: Placement]) { self.placements = placements }

    /// From the three lists as Home Assistant gives them; entries it cannot read are skipped.
    public init(entities: JSONValue, devices: JSONValue, areas: JSONValue) {
        var areaNames: [String: String] = [:]
        for area in areas.arrayValue ?? [] {
            if let id = area["area_id"]?.stringValue, let name = area["name"]?.stringValue { areaNames[id] = name }
        }
        var devicesByID: [String: (device: Device, area: String?)] = [:]
        for device in devices.arrayValue ?? [] {
            guard let id = device["id"]?.stringValue else { continue }
            let name = [device["name_by_user"]?.stringValue, device["name"]?.stringValue].compactMap { $0 }.first { !$0.isEmpty }
            guard let name else { continue }
            devicesByID[id] = (Device(id: id, name: name, model: device["model"]?.stringValue),
                               device["area_id"]?.stringValue.flatMap { areaNames[$0] })
        }
        var placements: [String: Placement] = [:]
        for entity in entities.arrayValue ?? [] {
            guard let entityID = entity["entity_id"]?.stringValue else { continue }
            let device = entity["device_id"]?.stringValue.flatMap { devicesByID[$0] }
            let area = entity["area_id"]?.stringValue.flatMap { areaNames[$0] } ?? device?.area
            if device != nil || area != nil { placements[entityID] = Placement(device: device?.device, area: area) }
        }
        self.placements = placements
    }

    public subscript(entityID: String) -> Placement? { placements[entityID] }

    public var isEmpty: Bool { placements.isEmpty }
}
