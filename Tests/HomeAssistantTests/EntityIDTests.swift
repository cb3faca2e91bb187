import HomeAssistant
import Testing

struct EntityIDTests {
    @Test(arguments: ["sensor.washer_progress", "timer.laundry", "binary_sensor.door_2"])
    func accepts(_ id: String) { #expect(EntityID.isValid(id)) }

    @Test(arguments: ["sensor", "Sensor.x", "sensor.", ".x", "sensor.a.b", "sensor.wash-er", "sensor._x"])
    func rejects(_ id: String) { #expect(!EntityID.isValid(id)) }
}
