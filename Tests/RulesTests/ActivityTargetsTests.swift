import Foundation
import JSON
import LiveActivity
import Rules
import Testing
import Templates

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

    func load(_ activities: String) throws -> Result<RulesFile, ConfigErrors> { try RulesFixture(header: Self.header).load(activities) }

    func errors(_ activities: String) throws -> [String] { try RulesFixture(header: Self.header).errors(activities) }

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
        #expect(failure.positioned == [
            "2:66 backends.family.service: \"light.kitchen\" is not a notify service; write notify.mobile_app_<device>",
            "2:81 backends.family.service: \"notify.mobile_app_me\" is named twice",
        ])
    }
}

/// The budget keys: min_change in its three forms, the hourly cap, the settle after a start, renewal.
struct BudgetKeysTests {
    func load(_ activity: String, defaults: String = "") throws -> Result<RulesFile, ConfigErrors> {
        let folder = try ConfigFolder(["livebridge.yaml": """
            backends:
              aivi: { type: aivi, token: t }
              phone: { type: homeassistant, service: notify.mobile_app_phone }
            defaults: { backend: aivi\(defaults) }
            activities:
              washer:
                active_when: "{{ true }}"
                template: generic
                progress: 0.5
            \(activity)

            """])
        return RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:])
    }

    func errors(_ activity: String, defaults: String = "") throws -> [String] {
        guard case .failure(let failure) = try load(activity, defaults: defaults) else { return [] }
        return failure.positioned
    }

    @Test func minChangeTakesAProgressDeltaAnETADriftOrBoth() throws {
        #expect(try load("    min_change: 0.05").get().activities[0].budget.minChange == MinChange(progress: 0.05, eta: .zero))
        #expect(try load("    min_change: 3m").get().activities[0].budget.minChange == MinChange(progress: 0, eta: .seconds(180)))
        #expect(try load("    min_change: {progress: 0.1, eta: 00:05:00}").get().activities[0].budget.minChange
                == MinChange(progress: 0.1, eta: .seconds(300)))
        #expect(try errors("    min_change: 5") == ["10:17 activities.washer.min_change: \"5\" is not a progress delta; write a fraction above 0 and at most 1, e.g. 0.05"])
        #expect(try errors("    min_change: soon") == [
            "10:17 activities.washer.min_change: \"soon\" is neither a progress delta (0.05) nor an ETA drift (3m); write one, or {progress: 0.05, eta: 3m}",
        ])
        #expect(try errors("    min_change: {progres: 0.1}").first?.hasPrefix("10:18 activities.washer.min_change.progres: unknown key \"progres\" (did you mean \"progress\"?)") == true)
    }

    @Test func theHourlyCapRenewalAndSettleHaveDefaultsAndBounds() throws {
        let rule = try load("").get().activities[0]
        #expect(rule.budget.maxPerHour == 15 && rule.budget.renewAfter == .seconds(28_200) && rule.budget.settle == nil)
        #expect(rule.targets[0].budget.settle == .zero, "Aivi needs no settle")
        let phone = try load("    backend: phone").get().activities[0]
        #expect(phone.targets[0].budget.settle == .seconds(10), "Home Assistant's settle, for the activity's own push token")
        let tuned = try load("    max_updates_per_hour: unlimited\n    renew_after: never\n    start_settle: 0s", defaults: ", max_updates_per_hour: 40").get()
        #expect(tuned.budget.maxPerHour == 40)
        #expect(tuned.activities[0].budget.maxPerHour == nil && tuned.activities[0].budget.renewAfter == nil)
        #expect(tuned.activities[0].targets[0].budget.settle == .zero)
        #expect(try errors("    max_updates_per_hour: 0\n    renew_after: 9h") == [
            "10:27 activities.washer.max_updates_per_hour: \"0\" is not a number of updates from 1 to 3600 (or unlimited)",
            "11:18 activities.washer.renew_after: must be between 1s and 8h (iOS ends an activity at eight hours), or never",
        ])
    }
}

/// Home Assistant's `mobile_app_live_activity_dismissed` names a tag and a phone: the targets it means.
struct LiveActivityDismissalTests {
    @Test func theEventNamesTheTargetsOnThatPhoneWithThatTag() throws {
        let folder = try ConfigFolder(["livebridge.yaml": """
            backends:
              aivi: { type: aivi, token: t }
              family: { type: homeassistant, service: [notify.mobile_app_anna_s_iphone, notify.mobile_app_ben_s_phone] }
            activities:
              washer:
                backend: [family, aivi]
                active_when: "{{ true }}"
                template: generic
                progress: 0.5
              dryer:
                backend: family
                tag: dryer_tag
                active_when: "{{ true }}"
                template: generic
                progress: 0.5

            """])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        func named(_ data: JSONValue) -> [String] { LiveActivityDismissal.targets(in: rules, event: data).map { "\($0.activity)@\($0.target)" } }
        #expect(named(["tag": "washer", "device_id": "abc", "device_name": "Anna's iPhone"]) == ["washer@family/notify.mobile_app_anna_s_iphone"])
        #expect(named(["tag": "dryer_tag", "device_name": "Ben’s Phone"]) == ["dryer@family/notify.mobile_app_ben_s_phone"])
        #expect(named(["tag": "washer", "device_name": "Somebody else"]).isEmpty)
        #expect(named(["tag": "washer"]).isEmpty)
        #expect(LiveActivityDismissal.isFollowed(by: rules))
    }
}
