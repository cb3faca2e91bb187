import Foundation
import HomeAssistant
import JSON
import Rules
import Testing

/// A states file (`GET /api/states`' shape) keeps each entity's attributes in the order it writes them, as Home
/// Assistant (a Python dict) keeps them: templates rendered offline iterate and print them in that order.
struct StatesFileOrderTests {
    @Test func attributesKeepTheFilesOrderAndADuplicateNameItsFirstPlace() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-states-order-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"""
            [{"entity_id": "sensor.t", "state": "7", "attributes": {"friendly_name": "T", "unit_of_measurement": "°C",
              "device_class": "temperature", "friendly_name": "Outdoor"}},
             {"entity_id": "sensor.u", "state": "1", "attributes": {"z": 1, "a": {"y": 1}}},
             {"entity_id": "sensor.v", "state": "1"}]
            """#.utf8).write(to: URL(fileURLWithPath: path))
        let states = try StatesFile.load(path: path)
        let t = try #require(states["sensor.t"])
        #expect(t.attributes.map(\.key) == ["friendly_name", "unit_of_measurement", "device_class"])
        #expect(t.attribute("friendly_name") == "Outdoor", "the last value of a name written twice")
        #expect(try #require(states["sensor.u"]).attributes.map(\.key) == ["z", "a"])
        #expect(try #require(states["sensor.v"]).attributes.isEmpty)
    }
}
