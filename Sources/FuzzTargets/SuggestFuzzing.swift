import HomeAssistant
import JSON
import Rules

/// The `suggest` fuzz target: a household whose names, areas, units, states and options come from the input
/// (each line one value). Whatever they are, the proposal must load without an error and hold exactly the activities
/// `RulesProposal` kept; anything else is a finding.
enum SuggestFuzzing {
    static func run(_ bytes: [UInt8]) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func line(_ i: Int) -> String { i < lines.count ? lines[i] : "" }
        func state(_ id: String, _ value: String, _ attributes: [String: JSONValue]) -> EntityState {
            EntityState(entityID: id, state: value, attributes: EntityAttributes(attributes), lastChanged: 0)
        }
        let list = [
            state("sensor.washer_status", line(0), ["friendly_name": .string(line(1)), "device_class": "enum",
                                                     "options": .array([.string(line(2)), .string(line(3)), "idle", "run"])]),
            state("sensor.washer_progress", line(4), ["unit_of_measurement": "%", "friendly_name": .string(line(1))]),
            state("sensor.washer_remaining_time", line(5), ["unit_of_measurement": .string(line(6)), "device_class": "duration"]),
            state("sensor.dryer_power", "1800", ["device_class": "power", "unit_of_measurement": "W", "friendly_name": .string(line(7))]),
            state("timer.laundry", "active", ["friendly_name": .string(line(8)), "duration": "1:30:00", "finishes_at": .string(line(9))]),
            state("vacuum.robo", line(10), ["friendly_name": .string(line(11)), "battery_level": 80]),
            state("media_player.living_room", "playing", ["friendly_name": .string(line(12))]),
            state("sensor.wm_operation_state", line(13), ["device_class": "enum", "options": .array([.string(line(13)), "ready"])]),
        ]
        let states = Dictionary(list.map { ($0.entityID, $0) }, uniquingKeysWith: { a, _ in a })
        let directory = DeviceDirectory(
            entities: [["entity_id": "sensor.wm_operation_state", "device_id": "d1", "area_id": nil],
                       ["entity_id": "sensor.dryer_power", "device_id": "d2", "area_id": "a2"]],
            devices: [["id": "d1", "name": .string(line(14)), "name_by_user": .string(line(15)), "area_id": "a1"],
                      ["id": "d2", "name": .string(line(16)), "area_id": "a2"]],
            areas: [["area_id": "a1", "name": .string(line(17))], ["area_id": "a2", "name": .string(line(18))]])
        let proposal = RulesProposal(connection: .supervisor, appliances: ApplianceRecognizer.recognise(states, directory: directory),
                                     source: line(19))
        let text = proposal.text.replacing("!secret aivi_token", with: "fuzz-token")
        switch RulesLoader.load(text: text, file: "/nonexistent/livebridge-fuzz/livebridge.yaml", environment: ["SUPERVISOR_TOKEN": "s"]) {
        case .success(let rules):
            let loaded = rules.activities.map(\.id).sorted()
            let meant = proposal.appliances.map(\.id).sorted()
            if loaded != meant { fatalError("the proposal holds \(loaded), meant \(meant):\n\(text)") }
        case .failure(let errors):
            fatalError("the proposal does not load: \(errors)\n\(text)")
        }
    }
}
