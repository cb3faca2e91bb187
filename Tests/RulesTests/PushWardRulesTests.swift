import Foundation
import JSON
import LiveActivity
import Rules
import Testing

/// PushWard in a rules file: its own templates with their fields and limits at line:column, an Aivi progress or
/// generic mapped to its generic, the options of an activity (priority, sound, time to live), one rule at every kind
/// of backend.
struct PushWardRulesTests {
    static let header = """
        backends:
          aivi: { type: aivi, token: t-aivi }
          pulse: { type: islandpulse, token: t-pulse }
          phone: { type: homeassistant, service: notify.mobile_app_phone }
          ward: { type: pushward, token: pw-key }
        defaults: { backend: ward }
        activities:

        """

    func load(_ activities: String) throws -> Result<RulesFile, ConfigErrors> {
        let folder = try ConfigFolder(["livebridge.yaml": Self.header + activities])
        return RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:])
    }

    func errors(_ activities: String) throws -> [String] {
        guard case .failure(let failure) = try load(activities) else { return [] }
        return failure.errors.map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" }
    }

    let context = EvaluationContext(states: [:], now: 1_795_348_800)

    @Test func aCountdownIsPushWardsOwnTemplateWithItsOptions() throws {
        let rules = try load("""
              pizza:
                active_when: "{{ true }}"
                template: countdown
                priority: 5
                sound: chime
                ended_ttl: 10m
                state: Baking
                icon: mdi:pizza
                end_date: "{{ (now() | as_timestamp + 600) | int }}"
                completion_message: Pizza is ready

            """).get()
        let rule = rules.activities[0]
        var notes: [PayloadIssue] = []
        let start = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(start.method == "PATCH" && start.target == "/activities/pizza")
        #expect(start.body == ["state": "ongoing", "priority": 5, "sound": "chime", "content": [
            "template": "countdown", "state": "Baking", "icon": "mdi:pizza", "end_date": 1_795_349_400, "completion_message": "Pizza is ready"]])
        #expect(start.creation == ["slug": "pizza", "name": "pizza", "priority": 5, "ended_ttl": 600], "created before it starts")
        // Its end is two-phase: the final content as a last ongoing frame, then ended five seconds later.
        let end = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .end, in: context, notes: &notes).get()
        #expect(end.body["state"] == "ongoing" && end.dismissal?.after == .seconds(5) && end.dismissal?.body["state"] == "ended")
        #expect(notes.isEmpty)
    }

    @Test func anAiviProgressGoesToPushWardsGenericAndEveryKindAtOnce() throws {
        let rules = try load("""
              washer:
                backend: [aivi, pulse, phone, ward]
                active_when: "{{ true }}"
                template: progress
                tap_url: homeassistant://navigate/laundry
                progress: { style: simple, value: 0.4, color: teal }
                header_left: Washing
                footer_left: Cotton 40°

            """).get()
        let rule = rules.activities[0]
        #expect(rule.targets.map(\.name) == ["aivi", "pulse", "phone", "ward"])
        var notes: [PayloadIssue] = []
        let requests = try rule.targets.map { try ActivityRenderer.render(rule, for: $0, phase: .start, in: context, notes: &notes).get() }
        #expect(requests.map(\.kind) == [.aivi, .islandpulse, .homeassistant, .pushward])
        #expect(requests[3].body["content"] == ["template": "generic", "progress": 0.4, "state": "Washing", "subtitle": "Cotton 40°",
                                                "accent_color": "teal", "tap_action": ["url": "homeassistant://navigate/laundry"]])
        #expect(rules.notes.coercions.contains { $0.message.hasPrefix("on ward (PushWard) the Aivi progress template is PushWard's generic") })
    }

    @Test func mistakesAreNamedWhereTheyAreWritten() throws {
        #expect(try errors("""
              timer:
                slug: -bad
                priority: 11
                sound: chimes
                active_when: "{{ true }}"
                template: countdown
                state: Baking

            """) == [
            "9:5 activities.timer.end_date: is required",
            "9:11 activities.timer.slug: \"-bad\" is not a PushWard slug: a letter or digit, then letters, digits, _ and -, at most 128",
            "10:15 activities.timer.priority: \"11\" is not a priority from 0 to 10",
            "11:12 activities.timer.sound: unknown sound \"chimes\" (did you mean \"chime\"?)",
        ])
        #expect(try errors("""
              vacuum:
                active_when: "{{ true }}"
                template: monitor

            """).first?.contains("template \"monitor\" cannot be sent to pushward backend \"ward\"") == true)
    }
}
