import Foundation
import Platform
import HomeAssistant
import JSON
import LiveActivity
@testable import Rules
import Testing
@testable import Templates

/// `suggest`: appliances recognised among states, and a proposal that loads and renders start and end cleanly.
struct SuggestTests {
    static func state(_ id: String, _ value: String, _ attributes: [String: JSONValue] = [:]) -> EntityState {
        EntityState(entityID: id, state: value, attributes: EntityAttributes(attributes), lastChanged: 0)
    }

    /// A household as integrations name things, running or idle.
    static func household(running: Bool) -> [String: EntityState] {
        let list = [
            state("sensor.washer_status", running ? "running" : "idle", ["friendly_name": "Washer status"]),
            state("sensor.washer_progress", running ? "40" : "0", ["friendly_name": "Washer progress", "unit_of_measurement": "%"]),
            state("sensor.washer_remaining_time", "2026-11-23T21:00:00+00:00", ["device_class": "timestamp"]),
            state("sensor.dishwasher_operation_state", running ? "run" : "ready", ["friendly_name": "Dishwasher Operation state", "device_class": "enum",
                  "options": ["inactive", "ready", "delayedstart", "run", "pause", "actionrequired", "finished", "error", "aborting"]]),
            state("sensor.dishwasher_program_progress", running ? "20" : "0", ["unit_of_measurement": "%"]),
            state("sensor.dryer_power", running ? "1800" : "1", ["device_class": "power", "unit_of_measurement": "W", "friendly_name": "Dryer power"]),
            state("sensor.tesla_battery", "63", ["device_class": "battery", "unit_of_measurement": "%", "friendly_name": "Tesla battery"]),
            state("binary_sensor.tesla_charging", running ? "on" : "off", ["device_class": "battery_charging"]),
            state("sensor.tesla_time_to_full_charge", "2", ["unit_of_measurement": "h"]),
            state("sensor.x1c_print_progress", running ? "55" : "0", ["unit_of_measurement": "%", "friendly_name": "X1C Print progress"]),
            state("sensor.x1c_remaining_time", "42", ["unit_of_measurement": "min", "device_class": "duration"]),
            state("sensor.x1c_print_status", running ? "printing" : "idle"),
            state("timer.laundry", running ? "active" : "idle", running
                  ? ["friendly_name": "Laundry", "duration": "1:30:00", "finishes_at": "2026-11-23T21:00:00+00:00"]
                  : ["friendly_name": "Laundry", "duration": "1:30:00"]),
            state("vacuum.robo", running ? "cleaning" : "docked", ["friendly_name": "Robo", "battery_level": 80]),
            state("media_player.living_room", running ? "playing" : "idle", ["friendly_name": "Living room", "media_title": "Song"]),
            // Not appliances: a phone's battery, a temperature, a light, a switch whose name holds "ev".
            state("sensor.phone_battery_level", "80", ["device_class": "battery", "unit_of_measurement": "%"]),
            state("sensor.outdoor_temperature", "8", ["device_class": "temperature"]),
            state("light.kitchen", "on"),
            state("sensor.every_switch_status", "on"),
        ]
        return Dictionary(uniqueKeysWithValues: list.map { ($0.entityID, $0) })
    }

    @Test func theHouseholdsAppliancesAreRecognisedAndNothingElse() {
        let found = ApplianceRecognizer.recognise(Self.household(running: false))
        #expect(found.map { "\($0.id) \($0.kind.rawValue)" } == [
            "laundry timer", "robo vacuum", "dishwasher dishwasher", "dryer dryer", "tesla ev_charging", "washer washer",
            "x1c printer", "living_room media_player"])
        let byID = Dictionary(uniqueKeysWithValues: found.map { ($0.id, $0) })
        #expect(byID["washer"]?.running == .notStates("sensor.washer_status", ApplianceRecognizer.idleStates))
        #expect(byID["washer"]?.progress == "sensor.washer_progress")
        #expect(byID["washer"]?.remaining == .finishesAt("sensor.washer_remaining_time"))
        #expect(byID["washer"]?.name == "Washer", "the friendly name without its role's words")
        #expect(byID["dishwasher"]?.running == .states("sensor.dishwasher_operation_state", ["delayedstart", "run", "actionrequired", "aborting"]),
                "an enum sensor runs in its options that are not idle")
        #expect(byID["dryer"]?.running == .power("sensor.dryer_power", watts: 5), "a power sensor alone: above 5 W")
        #expect(byID["tesla"]?.running == .states("binary_sensor.tesla_charging", ["on"]) && byID["tesla"]?.battery == "sensor.tesla_battery")
        #expect(byID["x1c"]?.remaining == .amount("sensor.x1c_remaining_time", unit: "min") && byID["x1c"]?.name == "X1C")
        #expect(byID["laundry"]?.entities == ["timer.laundry"])
    }

    @Test func onlyTheFirstMediaPlayersPlayingOnesFirstAreProposed() {
        var states: [String: EntityState] = [:]
        for name in ["a", "b", "c", "d", "e"] { states["media_player.\(name)"] = Self.state("media_player.\(name)", name == "e" ? "playing" : "idle") }
        states["media_player.f"] = Self.state("media_player.f", "unavailable")
        #expect(ApplianceRecognizer.recognise(states).map(\.id) == ["e", "a", "b"])
    }

    /// The proposal loads as `check` loads it, and every activity renders its start while running and its end once
    /// idle with no note: nothing the phone would be missing.
    @Test func theProposalLoadsAndEveryActivityRendersStartAndEndCleanly() throws {
        let proposal = RulesProposal(connection: .url("http://homeassistant.local:8123"),
                                     appliances: ApplianceRecognizer.recognise(Self.household(running: false)), source: "a test")
        let folder = try ConfigFolder(["livebridge.yaml": proposal.text, "secrets.yaml": "ha_token: t\naivi_token: a\n"])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        #expect(rules.activities.count == 8)
        let now = try #require(Timestamp.epoch(fromISO8601: "2026-11-23T20:30:00Z"))
        let running = EvaluationContext(states: Self.household(running: true), now: now)
        let idle = EvaluationContext(states: Self.household(running: false), now: now)
        for rule in rules.activities {
            #expect(try ActivityRenderer.isActive(rule, in: running).get(), "\(rule.id) runs")
            #expect(try !ActivityRenderer.isActive(rule, in: idle).get(), "\(rule.id) is idle")
            var notes: [PayloadIssue] = []
            _ = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .start, in: running, notes: &notes).get()
            _ = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .end, in: idle, notes: &notes).get()
            #expect(notes.isEmpty, "\(rule.id): \(notes)")
        }
    }

    @Test func inTheAddonTheProposalNamesNoHomeAssistant() throws {
        let proposal = RulesProposal(connection: .supervisor, appliances: [], source: "Home Assistant at ws://supervisor/core/websocket")
        #expect(!proposal.text.contains("homeassistant:") && proposal.secretNames == ["aivi_token"])
        let folder = try ConfigFolder(["livebridge.yaml": proposal.text, "secrets.yaml": "aivi_token: a\n"])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: ["SUPERVISOR_TOKEN": "s"]).get()
        #expect(rules.activities.isEmpty && rules.homeAssistant?.throughSupervisor == true)
    }

    /// Registries as Home Assistant lists them: a washer whose sensors share no name, on one device in the cellar.
    static let washerDirectory = DeviceDirectory(
        entities: [["entity_id": "sensor.wm_operation_state", "device_id": "d1", "area_id": nil],
                   ["entity_id": "sensor.bosch_remaining_program_time", "device_id": "d1", "area_id": nil],
                   ["entity_id": "sensor.kitchen_power", "device_id": nil, "area_id": "kitchen"],
                   ["device_id": "d1"]],
        devices: [["id": "d1", "name": "Waschmaschine", "name_by_user": nil, "model": "WAX32", "area_id": "cellar"],
                  ["id": "d2", "name": "", "name_by_user": nil]],
        areas: [["area_id": "cellar", "name": "Keller"], ["area_id": "kitchen", "name": "Kitchen"]])

    @Test func sensorsOnOneDeviceAreOneApplianceNamedAsTheDeviceInItsArea() {
        let states = Dictionary(uniqueKeysWithValues: [
            Self.state("sensor.wm_operation_state", "run", ["device_class": "enum", "options": ["ready", "run", "finished"]]),
            Self.state("sensor.bosch_remaining_program_time", "2026-11-23T21:00:00+00:00", ["device_class": "timestamp"]),
        ].map { ($0.entityID, $0) })
        #expect(ApplianceRecognizer.recognise(states) == [], "by names alone: two unrelated sensors")
        #expect(ApplianceRecognizer.recognise(states, directory: Self.washerDirectory) == [
            Appliance(kind: .washer, id: "waschmaschine", name: "Waschmaschine", running: .states("sensor.wm_operation_state", ["run"]),
                      remaining: .finishesAt("sensor.bosch_remaining_program_time"), area: "Keller"),
        ])
    }

    @Test func theDirectoryTakesTheUsersNamesAndTheEntitysOwnArea() {
        let directory = DeviceDirectory(
            entities: [["entity_id": "sensor.a", "device_id": "d1", "area_id": "garden"], ["entity_id": "sensor.b", "device_id": "d1"],
                       ["entity_id": "sensor.c", "device_id": "gone"]],
            devices: [["id": "d1", "name": "Mower 3000", "name_by_user": "Lawn mower", "area_id": "garage"]],
            areas: [["area_id": "garage", "name": "Garage"], ["area_id": "garden", "name": "Garden"]])
        #expect(directory["sensor.a"] == .init(device: .init(id: "d1", name: "Lawn mower", model: nil), area: "Garden"))
        #expect(directory["sensor.b"]?.area == "Garage")
        #expect(directory["sensor.c"] == nil, "a device the registry does not list places nothing")
        #expect(Self.washerDirectory["sensor.kitchen_power"] == .init(device: nil, area: "Kitchen"))
        #expect(DeviceDirectory(entities: "not a list", devices: .null, areas: [1, 2]).isEmpty)
    }
}
