import Foundation
import HomeAssistant
import JSON
import LiveActivity
@testable import Rules
import Testing
@testable import Templates

/// The lifecycle's payloads, failures that must never be sent, and payloads mapped across backends.
struct ActivityRendererTests {
    static let rules = """
        backends:
          aivi: { type: aivi, token: t }
          pulse: { type: islandpulse, token: p, tier: free }
          phone: { type: homeassistant, service: notify.mobile_app_phone }
        defaults: { backend: aivi }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer', 'running') }}"
            template: progress
            icon: auto
            entity: sensor.washer
            progress: { style: simple, value: "{{ states('sensor.washer_progress') | float / 100 }}" }
            header_left: Washing
            footer_right: "{{ state_attr('sensor.washer', 'program') }}"
            on_end:
              header_left: { value: Done, text_color: green }
              progress: { style: simple, value: 1 }
          vacuum_pulse:
            backend: pulse
            active_when: "{{ true }}"
            template: monitor
            icon: { name: robotic.vacuum }
            left_column: { header: Room, value: Kitchen }
            right_column: { header: Area, value: "{{ state_attr('vacuum.robo', 'area') }}" }
          charge_pulse:
            backend: pulse
            active_when: "{{ true }}"
            template: progress
            progress: { style: simple, value: 0.5 }
            header_left: Charging
            compact_value: 50%
          laundry_phone:
            backend: phone
            active_when: "{{ true }}"
            template: progress
            progress: { style: simple, value: 0.25 }
            header_left: Laundry
            header_right: { value: "{{ state_attr('timer.laundry', 'finishes_at') }}", formatter: time_until }
          big:
            active_when: "{{ true }}"
            template: generic
            progress: 0.5
            state: "{{ 'x' * 5000 }}"
        """

    func context(_ extra: [String: EntityState] = [:]) -> EvaluationContext {
        var states: [String: EntityState] = [
            "sensor.washer": EntityState(entityID: "sensor.washer", state: "running", attributes: ["icon": "mdi:washing-machine", "program": "Cotton 40"], lastChanged: 0),
            "sensor.washer_progress": EntityState(entityID: "sensor.washer_progress", state: "42", lastChanged: 0),
            "vacuum.robo": EntityState(entityID: "vacuum.robo", state: "cleaning", attributes: ["area": 12.5], lastChanged: 0),
            "timer.laundry": EntityState(entityID: "timer.laundry", state: "active", attributes: ["finishes_at": "2026-11-22T13:00:00+00:00"], lastChanged: 0),
        ]
        states.merge(extra) { $1 }
        return EvaluationContext(states: states, now: 1_795_348_800, timeZone: .utc)
    }

    func rule(_ id: String) throws -> ActivityRule {
        let folder = try ConfigFolder(["livebridge.yaml": Self.rules])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        return try #require(rules.activities.first { $0.id == id })
    }

    func render(_ id: String, _ phase: PushKind = .update, context: EvaluationContext? = nil) throws -> (Result<BackendRequest, RenderError>, [PayloadIssue]) {
        var notes: [PayloadIssue] = []
        let found = try rule(id)
        let result = ActivityRenderer.render(found, for: found.targets[0], phase: phase, in: context ?? self.context(), notes: &notes)
        return (result, notes)
    }

    @Test func theEndPushCarriesOnEndFieldsAndIdle() throws {
        let request = try render("washer", .end).0.get()
        #expect(request.body["state"] == "IDLE")
        #expect(request.body["content"]?["header_left"] == ["value": "Done", "text_color": "green"])
        #expect(request.body["content"]?["progress"] == ["style": "simple", "value": 1.0])
        #expect(request.body["content"]?["footer_right"] == ["value": "Cotton 40"])
    }

    @Test func iconAutoComesFromTheEntitysMdiIcon() throws {
        #expect(try render("washer").0.get().body["content"]?["icon"] == "washer")
    }

    @Test func anUnavailableSensorNeverSendsGarbage() throws {
        let offline = context(["sensor.washer_progress": EntityState(entityID: "sensor.washer_progress", state: "unavailable", lastChanged: 0)])
        let (result, notes) = try render("washer", context: offline)
        guard case .failure(let failure) = result else { Issue.record("an invalid payload was produced"); return }
        #expect(failure.issues == [PayloadIssue(path: "progress.value", "is required")])
        #expect(notes == [PayloadIssue(path: "activities.washer.progress.value", "float got string 'unavailable', which is not a number, and no default")])
    }

    @Test func aMissingOptionalFieldIsLeftOutNotNull() throws {
        let without = context(["sensor.washer": EntityState(entityID: "sensor.washer", state: "running", lastChanged: 0)])
        let request = try render("washer", context: without).0.get()
        #expect(request.body["content"]?["footer_right"] == nil)
        #expect(!request.body.jsonText.contains("null"))
    }

    @Test func aMonitorShownOnIslandPulseBecomesSportsAndTheFreeTierUsesTheDefaultLayout() throws {
        let request = try render("vacuum_pulse", .start).0.get()
        #expect(request.body == ["job_id": "vacuum_pulse", "action": "start", "layout": "default", "icon": "robotic.vacuum",
                                 "metricA": "Kitchen", "subA": "Room", "metricB": "12.5", "subB": "Area",
                                 "message": "Room Kitchen · Area 12.5"])
    }

    @Test func aProgressTemplateOnIslandPulseBecomesTheProgressLayout() throws {
        let request = try render("charge_pulse", .end).0.get()
        #expect(request.body == ["job_id": "charge_pulse", "action": "end", "layout": "default", "progress": 0.5,
                                 "metric": "50%", "message": "Charging", "status": "success"])
    }

    @Test func aProgressTemplateOnHomeAssistantBecomesALiveUpdateWithAChronometer() throws {
        let request = try render("laundry_phone").0.get()
        #expect(request.method == "call_service" && request.target == "notify.mobile_app_phone")
        // Stale a minute after the countdown ends, if no other push comes.
        #expect(request.body == ["message": "Laundry", "data": ["live_update": true, "tag": "laundry_phone", "progress": 25,
                                                                 "progress_max": 100, "when": 1795352400.0, "chronometer": true,
                                                                 "stale_date": 1795352460]])
        // The end is one push: the final content as content_state, on the Lock Screen until dismiss_after (5 min) from now.
        let end = try render("laundry_phone", .end).0.get()
        #expect(end.body == ["message": "clear_notification", "data": [
            "tag": "laundry_phone", "dismissal_date": 1795349100,
            "content_state": ["message": "Laundry", "progress": 25, "progress_max": 100, "chronometer": true, "countdown_end": 1795352400]]])
        #expect(end.dismissal == nil && end.target == "notify.mobile_app_phone")
    }

    @Test func dismissAfterZeroClearsAtOnceAndOnlyHomeAssistantTakesIt() throws {
        let rules = try RulesLoader.load(text: """
            backends:
              phone: { type: homeassistant, service: notify.mobile_app_phone }
              aivi: { type: aivi, token: t }
            activities:
              now:
                backend: phone
                active_when: "{{ true }}"
                template: progress
                dismiss_after: 0s
                header_left: Laundry
                progress: { style: simple, value: 0.5 }
            """, file: "r.yaml").get()
        var notes: [PayloadIssue] = []
        let end = try ActivityRenderer.render(rules.activities[0], for: rules.activities[0].targets[0], phase: .end, in: EvaluationContext(states: [:], now: 0), notes: &notes).get()
        #expect(end.body == ["message": "clear_notification", "data": ["tag": "now", "dismissal_date": 0,
                                                                       "content_state": ["message": "Laundry", "progress": 50, "progress_max": 100]]]
                && end.dismissal == nil)
        guard case .failure(let errors) = RulesLoader.load(text: """
            backends:
              aivi: { type: aivi, token: t }
            activities:
              washer:
                backend: aivi
                active_when: "{{ true }}"
                template: generic
                dismiss_after: 1m
                state: Washing
            """, file: "r.yaml") else { Issue.record("dismiss_after taken on Aivi"); return }
        #expect(errors.errors.map(\.description).contains { $0.hasPrefix("r.yaml:8:5: activities.washer.dismiss_after:") })
    }

    @Test func aPayloadOverFourKilobytesIsRefused() throws {
        guard case .failure(let failure) = try render("big").0 else { Issue.record("a 5 KB payload was accepted"); return }
        #expect(failure.issues.first?.message.hasSuffix("a Live Activity holds at most 4096") == true)
    }
}

/// A template's value in a text field reads as Developer Tools → Template shows it (Python's str()).
struct TextFieldTests {
    @Test func numbersAndBooleansInTextFieldsReadAsHomeAssistantPrintsThem() throws {
        let text = """
            backends: { aivi: { type: aivi, token: t } }
            activities:
              heating:
                active_when: "{{ true }}"
                template: generic
                progress: 0.5
                state: "{{ states('input_number.target') | float(0) | round(1) }}"
              guest:
                active_when: "{{ true }}"
                template: generic
                progress: 0.5
                state: "{{ is_state('input_boolean.guest', 'on') }}"
            """
        let rules = try RulesLoader.load(text: text, file: "/tmp/livebridge-text.yaml").get()
        let context = EvaluationContext(states: [
            "input_number.target": EntityState(entityID: "input_number.target", state: "30.0", lastChanged: 0),
            "input_boolean.guest": EntityState(entityID: "input_boolean.guest", state: "off", lastChanged: 0),
        ], now: 0, timeZone: .utc)
        var notes: [PayloadIssue] = []
        let heating = try ActivityRenderer.render(rules.activities[0], for: rules.activities[0].targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(heating.body["content"]?["state"] == "30.0")
        let guest = try ActivityRenderer.render(rules.activities[1], for: rules.activities[1].targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(guest.body["content"]?["state"] == "False")
    }
}

/// An Aivi template shown as a Home Assistant live update takes the app's newer fields where Aivi has them.
struct LiveUpdateMappingTests {
    @Test func tapURLBecomesURLAndTheRightHandTextCriticalText() {
        let fields = LiveUpdateMapping.map(template: "progress", [
            "header_left": ["value": "Washing"], "header_right": ["value": "Cotton 40"],
            "footer_right": ["value": "2026-11-22T13:00:00+00:00", "formatter": "time_until"],
            "progress": ["style": "simple", "value": 0.426], "tap_url": "homeassistant://navigate/lovelace/laundry",
        ], now: 0)
        #expect(fields == ["progress_max": 100, "progress": 43, "message": "Washing", "critical_text": "Cotton 40",
                           "when": 1795352400.0, "chronometer": true, "url": "homeassistant://navigate/lovelace/laundry"])
    }
}

/// Island Pulse's last frame says how the job finished (its reference): success unless on_end says otherwise, never
/// the `running` written for the frames before.
struct IslandPulseEndStatusTests {
    func end(_ onEnd: String) throws -> JSONValue? {
        let rules = try RulesLoader.load(text: """
            backends:
              pulse: { type: islandpulse, token: p }
            activities:
              backup:
                backend: pulse
                active_when: "{{ true }}"
                template: progress
                status: running
                message: Copying
            \(onEnd)
            """, file: "r.yaml").get()
        var notes: [PayloadIssue] = []
        let rule = rules.activities[0]
        return try ActivityRenderer.render(rule, for: rule.targets[0], phase: .end, in: EvaluationContext(states: [:], now: 0), notes: &notes).get().body["status"]
    }

    @Test func aWrittenRunningBecomesSuccessAndOnEndDecides() throws {
        #expect(try end("") == "success")
        #expect(try end("    on_end: { status: failed, message: Disk full }") == "failed")
    }
}
