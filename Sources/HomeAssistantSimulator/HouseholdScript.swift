import FoundationEssentials
import JSON
import Platform

/// A scripted household, on a loop: a washer whose progress climbs and finishes, a laundry timer, an EV charging,
/// a robot vacuum, and a backup job. One cycle takes `cycle` seconds. Used by `livebridge demo` and the simulator command.
public struct HouseholdScript: Sendable {
    public let simulator: HomeAssistantSimulator
    public let cycle: Double

    public init(simulator: HomeAssistantSimulator, cycle: Double = 60) {
        self.simulator = simulator
        self.cycle = cycle
    }

    public static let entities = ["sensor.washer_status", "sensor.washer_progress", "timer.laundry", "binary_sensor.ev_charging",
                                  "sensor.ev_battery", "sensor.ev_minutes_left", "vacuum.robo", "sensor.backup_status"]

    public func runForever() async {
        await placeInRegistries()
        while !Task.isCancelled { await runCycle() }
    }

    /// Where the registries put the household: the washer's sensors on one device in the laundry room (its progress
    /// sensor moved to the utility room by hand), the EV's on the car in the garage, the vacuum in the living room.
    public func placeInRegistries() async {
        func entity(_ id: String, device: String?, area: String? = nil) -> JSONValue {
            ["entity_id": .string(id), "device_id": device.map { .string($0) } ?? .null, "area_id": area.map { .string($0) } ?? .null,
             "name": nil, "platform": "simulator"]
        }
        await simulator.setRegistries(
            entities: [entity("sensor.washer_status", device: "d-washer"), entity("sensor.washer_progress", device: "d-washer", area: "utility"),
                       entity("binary_sensor.ev_charging", device: "d-car"), entity("sensor.ev_battery", device: "d-car"),
                       entity("sensor.ev_minutes_left", device: "d-car"), entity("vacuum.robo", device: nil, area: "living_room"),
                       entity("timer.laundry", device: nil)],
            devices: [["id": "d-washer", "name": "WAW28440", "name_by_user": "Washer", "model": "Serie 8", "area_id": "laundry"],
                      ["id": "d-car", "name": "Car", "name_by_user": nil, "model": "Model Y", "area_id": "garage"]],
            areas: [["area_id": "laundry", "name": "Laundry room"], ["area_id": "utility", "name": "Utility room"],
                    ["area_id": "garage", "name": "Garage"], ["area_id": "living_room", "name": "Living room"]])
    }

    /// One cycle: 20 steps of work, then a rest.
    public func runCycle() async {
        let steps = 20
        let step = cycle * 0.8 / Double(steps)
        let start = Date().timeIntervalSince1970
        await simulator.setState("sensor.washer_status", "running", attributes: ["friendly_name": "Washer", "icon": "mdi:washing-machine"])
        await simulator.setState("timer.laundry", "active", attributes: [
            "friendly_name": "Laundry", "duration": .string(TemplateDuration.text(cycle * 0.8)),
            "finishes_at": .string(Timestamp.iso8601((start + cycle * 0.8).rounded())),
        ])
        await simulator.setState("binary_sensor.ev_charging", "on", attributes: ["friendly_name": "EV charging"])
        await simulator.setState("sensor.backup_status", "running", attributes: ["step": 1, "step_name": "Snapshotting volumes"])
        for n in 0...steps {
            let fraction = Double(n) / Double(steps)
            await simulator.setState("sensor.washer_progress", String(Int(fraction * 100)), attributes: ["unit_of_measurement": "%"])
            await simulator.setState("sensor.ev_battery", String(60 + Int(fraction * 35)), attributes: ["unit_of_measurement": "%", "device_class": "battery"])
            await simulator.setState("sensor.ev_minutes_left", String(Int((1 - fraction) * 40)), attributes: ["unit_of_measurement": "min"])
            await simulator.setState("vacuum.robo", n < steps ? "cleaning" : "docked", attributes: [
                "activity": n % 8 < 4 ? "Vacuuming" : "Mopping", "room": n < steps / 2 ? "living room" : "kitchen",
                "cleaned_area": .double((fraction * 42 * 10).rounded() / 10), "battery_level": .int(100 - Int(fraction * 30)),
            ])
            let backupStep = min(5, 1 + n * 5 / steps)
            await simulator.setState("sensor.backup_status", n < steps ? "running" : "done", attributes: [
                "step": .int(backupStep), "step_name": .string(["Snapshotting volumes", "Copying photos", "Copying documents", "Verifying", "Pruning old backups"][backupStep - 1]),
            ])
            try? await Task.sleep(for: .milliseconds(Int64(step * 1000)))
        }
        await simulator.setState("sensor.washer_status", "idle", attributes: ["friendly_name": "Washer", "icon": "mdi:washing-machine"])
        await simulator.setState("timer.laundry", "idle", attributes: ["friendly_name": "Laundry", "duration": .string(TemplateDuration.text(cycle * 0.8))])
        await simulator.setState("binary_sensor.ev_charging", "off", attributes: ["friendly_name": "EV charging"])
        try? await Task.sleep(for: .milliseconds(Int64(cycle * 200)))
        await simulator.setState("sensor.backup_status", "idle", attributes: ["step": 0, "step_name": "Idle"])
    }
}

/// `H:MM:SS`, as Home Assistant writes a timer's duration.
enum TemplateDuration {
    static func text(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return "\(s / 3600):" + twoDigits(s % 3600 / 60) + ":" + twoDigits(s % 60)
    }

    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
