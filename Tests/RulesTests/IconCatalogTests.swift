import HomeAssistant
import Rules
import Testing

struct IconCatalogTests {
    func symbol(_ id: String, _ attributes: [String: String] = [:]) -> String? {
        IconCatalog.symbol(for: EntityState(entityID: id, state: "on", attributes: EntityAttributes(attributes.mapValues { .string($0) }), lastChanged: 0))
    }

    @Test(arguments: [
        ("mdi:washing-machine", "washer"), ("mdi:tumble-dryer", "dryer"), ("mdi:dishwasher", "dishwasher"),
        ("mdi:car-electric", "bolt.car"), ("mdi:battery-charging-80", "battery.100.bolt"), ("mdi:timer-outline", "timer"),
        ("mdi:robot-vacuum", "robotic.vacuum"), ("mdi:thermometer", "thermometer.medium"), ("mdi:door-open", "door.left.hand.closed"),
        ("mdi:lock", "lock"), ("mdi:lightbulb-on", "lightbulb"), ("mdi:printer-3d-nozzle", "printer.filled.and.paper"),
        ("mdi:stove", "stove"), ("mdi:coffee-maker", "cup.and.saucer"),
    ])
    func fromTheMdiIcon(icon: String, expected: String) {
        #expect(symbol("sensor.x", ["icon": icon]) == expected)
    }

    @Test func fromDeviceClassThenDomain() {
        #expect(symbol("sensor.x", ["device_class": "battery"]) == "battery.75")
        #expect(symbol("sensor.x", ["icon": "mdi:unknown-thing", "device_class": "temperature"]) == "thermometer.medium")
        #expect(symbol("timer.laundry") == "timer")
        #expect(symbol("vacuum.robo") == "robotic.vacuum")
        #expect(symbol("sensor.nothing") == nil)
    }
}
