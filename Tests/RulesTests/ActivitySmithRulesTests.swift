import Foundation
import LiveActivity
import Rules
import Testing
import Templates
import JSON

/// ActivitySmith in a rules file: its own types with their fields, Aivi templates mapped (progress → progress,
/// monitor → stats), its stream key and channels; one rule at all five kinds of backend.
struct ActivitySmithRulesTests {
    static let header = """
        backends:
          aivi: { type: aivi, token: t-aivi }
          pulse: { type: islandpulse, token: t-pulse }
          phone: { type: homeassistant, service: notify.mobile_app_phone }
          ward: { type: pushward, token: pw-key }
          smith: { type: activitysmith, token: as-key, channels: [family] }
        defaults: { backend: smith }
        activities:

        """

    func load(_ activities: String) throws -> Result<RulesFile, ConfigErrors> { try RulesFixture(header: Self.header).load(activities) }

    let context = EvaluationContext(states: [:], now: 1_795_348_800)

    func render(_ rule: ActivityRule, _ index: Int = 0, _ phase: PushKind = .start) throws -> BackendRequest {
        var notes: [PayloadIssue] = []
        return try ActivityRenderer.render(rule, for: rule.targets[index], phase: phase, in: context, notes: &notes).get()
    }

    @Test func itsOwnTypesGoToTheStreamAndTheEndDeletesIt() throws {
        let rules = try load("""
              deploy:
                stream_key: deploy-prod
                dismiss_after: 2m
                active_when: "{{ true }}"
                template: segmented_progress
                title: Deploying
                subtitle: api
                number_of_steps: 4
                current_step: 2
                color: lime

            """).get()
        let start = try render(rules.activities[0])
        #expect(start.method == "PUT" && start.target == "/live-activity/stream/deploy-prod")
        #expect(start.body == ["channels": ["family"], "content_state": ["type": "segmented_progress", "title": "Deploying", "subtitle": "api",
                                                                         "number_of_steps": 4, "current_step": 2, "color": "lime"]])
        let end = try render(rules.activities[0], 0, .end)
        #expect(end.method == "DELETE" && end.body["content_state"]?["auto_dismiss_seconds"] == 120)
    }

    @Test func aiviTemplatesAreMappedAndOneRuleReachesAllFiveBackends() throws {
        let rules = try load("""
              washer:
                backend: [aivi, pulse, phone, ward, smith]
                active_when: "{{ true }}"
                template: progress
                progress: { style: simple, value: 0.42, color: blue }
                header_left: Washing
                footer_left: Cotton 40°
              vacuum:
                active_when: "{{ true }}"
                template: monitor
                left_column: { header: Status, value: Cleaning }
                right_column: { header: Battery, value: "76%" }

            """).get()
        let washer = rules.activities[0]
        let requests = try washer.targets.indices.map { try render(washer, $0) }
        #expect(requests.map(\.kind) == [.aivi, .islandpulse, .homeassistant, .pushward, .activitysmith])
        #expect(requests[4].body["content_state"] == ["type": "progress", "title": "Washing", "subtitle": "Cotton 40°", "percentage": 42.0, "color": "blue"])
        #expect(try render(rules.activities[1]).body["content_state"] == ["type": "stats", "title": "vacuum", "metrics": [
            ["label": "Status", "value": "Cleaning"], ["label": "Battery", "value": "76%"]]])
    }

    @Test func mistakesAreNamed() throws {
        guard case .failure(let failure) = try load("""
              bad:
                stream_key: "no spaces"
                active_when: "{{ true }}"
                template: alert
                title: Door open
                color: pink

            """) else { Issue.record("a bad stream loaded"); return }
        let messages = failure.errors.map { "\($0.path): \($0.message)" }
        #expect(messages.contains("activities.bad.stream_key: \"no spaces\" is not an ActivitySmith stream key: letters, digits, _ and -, at most 255"))
        #expect(messages.contains("activities.bad.message: is required"))
        #expect(messages.contains { $0.hasPrefix("activities.bad.color: unknown colour \"pink\"") }, "\(messages)")
    }

    @Test func aTimerCountsDownFromItsDurationOrUpFromZero() throws {
        let rules = try load("""
              oven:
                active_when: "{{ true }}"
                template: timer
                title: Oven
                color: orange
                duration_seconds: "{{ 25 * 60 }}"
              run:
                active_when: "{{ true }}"
                template: timer
                title: Benchmark
                counts_down: false
              nothing:
                active_when: "{{ true }}"
                template: timer
                title: Forgotten

            """).get()
        #expect(try render(rules.activities[0]).body["content_state"] == ["type": "timer", "title": "Oven", "color": "orange", "duration_seconds": 1500])
        #expect(try render(rules.activities[1]).body["content_state"] == ["type": "timer", "title": "Benchmark", "counts_down": false])
        var notes: [PayloadIssue] = []
        let refused = ActivityRenderer.render(rules.activities[2], for: rules.activities[2].targets[0], phase: .start, in: context, notes: &notes)
        guard case .failure(let failure) = refused else { Issue.record("a countdown without its duration rendered"); return }
        #expect(failure.issues.map(\.description) == ["duration_seconds: is required for a countdown (or counts_down: false to count up)"])
    }
}
