import Foundation
import LiveActivity
import Rules
import Testing

/// `backend:` as a list: one activity shown by several phones and services, each its own target.
struct ActivityTargetsTests {
    static let header = """
        backends:
          aivi: { type: aivi, token: t-aivi }
          pulse: { type: islandpulse, token: t-pulse }
          me: { type: homeassistant, service: notify.mobile_app_me }
          family: { type: homeassistant, service: [notify.mobile_app_me, notify.mobile_app_partner] }
        defaults: { backend: aivi }
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

    @Test func aListOfBackendsGivesOneTargetEachWithItsOwnID() throws {
        let rules = try load("""
              washer:
                backend: [me, aivi, pulse]
                slug: washer-aivi
                tag: washer_tag
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: progress
                progress: { style: simple, value: 0.5 }

            """).get()
        let targets = rules.activities[0].targets
        #expect(targets.map(\.name) == ["me", "aivi", "pulse"])
        #expect(targets.map(\.id) == ["washer_tag", "washer-aivi", "washer"], "each kind its own key; the activity's id where none is written")
        #expect(targets.map(\.service) == ["notify.mobile_app_me", nil, nil])
    }

    @Test func aHomeAssistantBackendWithSeveralServicesIsOneTargetPerPhone() throws {
        let rules = try load("""
              laundry:
                backend: [family, aivi]
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: 0.5

            """).get()
        let targets = rules.activities[0].targets
        #expect(targets.map(\.name) == ["family/notify.mobile_app_me", "family/notify.mobile_app_partner", "aivi"])
        #expect(targets.map(\.service) == ["notify.mobile_app_me", "notify.mobile_app_partner", nil])
        #expect(Set(targets.map(\.backend.name)) == ["family", "aivi"])
    }

    @Test func eachTargetGetsItsOwnPayload() throws {
        let rules = try load("""
              laundry:
                backend: [family, aivi, pulse]
                active_when: "{{ true }}"
                template: generic
                state: Washing
                progress: 0.5

            """).get()
        let rule = rules.activities[0]
        let context = EvaluationContext(states: [:], now: 0)
        var notes: [PayloadIssue] = []
        let requests = try rule.targets.map { try ActivityRenderer.render(rule, for: $0, phase: .start, in: context, notes: &notes).get() }
        #expect(requests.map(\.target) == ["notify.mobile_app_me", "notify.mobile_app_partner", "/activity/laundry", "/notify"])
        #expect(requests.map(\.backend) == ["family", "family", "aivi", "pulse"])
        #expect(requests[0].body["data"]?["tag"] == "laundry" && requests[1].body["data"]?["tag"] == "laundry")
        #expect(requests[2].body["content"]?["progress"] == 0.5)
        #expect(requests[3].body["job_id"] == "laundry")
    }

    @Test func badListsAreNamedWhereTheyAreWritten() throws {
        #expect(try errors("""
              washer:
                backend: [aivi, phonee, aivi]
                active_when: "{{ true }}"
                template: generic
                progress: 0.5

            """) == [
            "9:21 activities.washer.backend: no backend named \"phonee\"; declared: aivi, family, me, pulse",
            "9:29 activities.washer.backend: backend \"aivi\" is named twice",
        ])
        #expect(try errors("""
              washer:
                backend: []
                active_when: "{{ true }}"
                template: generic

            """) == ["9:14 activities.washer.backend: is an empty list"])
    }

    /// One set of fields for every target: a layout only one backend knows cannot go to another.
    @Test func aTemplateOneTargetCannotShowIsRefused() throws {
        #expect(try errors("""
              match:
                backend: [pulse, aivi]
                active_when: "{{ true }}"
                template: score

            """) == [
            "11:15 activities.match.template: template \"score\" cannot be sent to aivi backend \"aivi\"; it takes: generic, monitor, progress",
        ])
        #expect(try errors("""
              vacuum:
                backend: [aivi, me]
                active_when: "{{ true }}"
                template: monitor

            """) == [
            "11:15 activities.vacuum.template: template \"monitor\" cannot be sent to homeassistant backend \"me\"; it takes: live_update, progress, generic",
        ])
    }

    @Test func aHomeAssistantServiceListIsChecked() throws {
        let folder = try ConfigFolder(["livebridge.yaml": """
            backends:
              family: { type: homeassistant, service: [notify.mobile_app_me, light.kitchen, notify.mobile_app_me] }

            """])
        guard case .failure(let failure) = RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) else {
            Issue.record("a bad service list loaded")
            return
        }
        #expect(failure.errors.map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" } == [
            "2:66 backends.family.service: \"light.kitchen\" is not a notify service; write notify.mobile_app_<device>",
            "2:81 backends.family.service: \"notify.mobile_app_me\" is named twice",
        ])
    }
}
