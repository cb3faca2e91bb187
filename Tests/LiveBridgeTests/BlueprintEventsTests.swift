import Dispatcher
import Foundation
import JSON
import LiveActivity
import Rules
import Testing
@testable import LiveBridge

/// A blueprint's event becomes a dispatcher submission; a bad one a persistent notification, once per problem.
struct BlueprintEventsTests {
    func rules() throws -> RulesFile {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-events-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            backends:
              aivi: { type: aivi, token: t }
              family: { type: homeassistant, service: [notify.mobile_app_me, notify.mobile_app_partner] }
              ward: { type: pushward, token: k }
            defaults: { backend: aivi, min_interval: 2s }
            events: { type: my_activity_event }
            """.write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        return try RulesLoader.load(file: folder + "/rules.yaml", environment: [:]).get()
    }

    /// Each action as a line: what a test can compare exactly.
    func lines(_ actions: [BlueprintEvents.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .submit(let submission):
                var target = ""
                if case .start(let request) = submission.event { target = request.target }
                if case .end(let request) = submission.event { target = request.target }
                if case .change(let request, _) = submission.event { target = request.target }
                let lane = submission.target == submission.backend ? submission.backend : submission.target
                return "submit \(submission.activity) \(lane) \(submission.event.name) \(target) min_interval=\(submission.budget.minInterval)"
            case .notify(let activity, _, let id, let title, let message):
                return "notify \(activity) \(id.hasPrefix("livebridge_\(activity)_") && id.count == "livebridge_\(activity)_".count + 8) \(title): \(message)"
            }
        }
    }

    /// An event to Home Assistant's own Live Activities holds its updates for the start settle (the app reports the
    /// activity's push token after the start), as a rule's would; the others have none (it was submitted unresolved).
    @Test func anEventGetsItsBackendsStartSettle() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        let family = events.take(["activity": "laundry", "backend": "family", "payload": ["message": "Washing"]], rules: rules)
        let aivi = events.take(["activity": "washer", "payload": ["template": "generic", "progress": 0.5]], rules: rules)
        for action in family {
            guard case .submit(let submission) = action else { Issue.record("not a submission"); continue }
            #expect(submission.budget.settle == UpdateBudget.homeAssistantSettle)
        }
        guard case .submit(let submission)? = aivi.first else { Issue.record("not a submission"); return }
        #expect(submission.budget.settle == .zero)
    }

    @Test func aValidEventIsSubmittedWithTheRulesBudget() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        #expect(lines(events.take(["activity": "washer", "payload": ["template": "generic", "progress": 0.5]], rules: rules))
                == ["submit washer aivi start /activity/washer min_interval=2.0 seconds"])
        #expect(lines(events.take(["activity": "washer", "action": "end"], rules: rules))
                == ["submit washer aivi end /activity/washer min_interval=2.0 seconds"])
    }

    /// `update` changes a running activity only (a change, which an idle lane ignores); `start` and `ONGOING` start or
    /// update.
    @Test func anUpdateOnlyUpdatesAndAStartStarts() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        let payload: JSONValue = ["template": "generic", "progress": 0.5]
        #expect(lines(events.take(["activity": "washer", "action": "update", "payload": payload], rules: rules))
                == ["submit washer aivi update /activity/washer min_interval=2.0 seconds"])
        if case .submit(let submission) = events.take(["activity": "washer", "action": "update", "payload": payload], rules: rules).first {
            guard case .change(_, let urgent) = submission.event else { Issue.record("not a change: \(submission.event)"); return }
            #expect(!urgent)
        }
        for action in ["start", "ONGOING"] {
            if case .submit(let submission) = events.take(["activity": "washer", "action": .string(action), "payload": payload], rules: rules).first {
                guard case .start = submission.event else { Issue.record("\(action) is not a start"); return }
            }
        }
    }

    /// A blueprint's event for PushWard: its own content, checked by its schema, ended in one phase.
    @Test func anEventForPushWardCarriesItsContent() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        #expect(lines(events.take(["activity": "pizza", "backend": "ward", "payload": ["template": "countdown", "state": "Baking", "end_date": 1_795_349_400]],
                                  rules: rules)) == ["submit pizza ward start /activities/pizza min_interval=2.0 seconds"])
        let told = lines(events.take(["activity": "pizza", "backend": "ward", "payload": ["template": "countdown", "state": "Baking"]], rules: rules))
        #expect(told.first?.contains("payload.end_date is required") == true, "\(told)")
    }

    @Test func anEventForAHomeAssistantBackendWithSeveralPhonesGoesToEach() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        #expect(lines(events.take(["activity": "laundry", "backend": "family", "payload": ["message": "Washing"]], rules: rules)) == [
            "submit laundry family/notify.mobile_app_me start notify.mobile_app_me min_interval=2.0 seconds",
            "submit laundry family/notify.mobile_app_partner start notify.mobile_app_partner min_interval=2.0 seconds",
        ])
    }

    @Test func aProblemIsToldOnceUntilTheActivityIsValidAgain() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        let bad: JSONValue = ["activity": "washer", "payload": ["template": "generic", "progress": 7]]
        let told = lines(events.take(bad, rules: rules))
        #expect(told.count == 1)
        #expect(told.first?.hasPrefix("notify washer true LiveBridge: activity washer: The my_activity_event event for washer was not sent: payload.progress ") == true,
                "\(told)")
        #expect(events.take(bad, rules: rules).isEmpty, "the same problem again is not told again")
        _ = events.take(["activity": "washer", "payload": ["template": "generic", "progress": 0.5]], rules: rules)
        #expect(lines(events.take(bad, rules: rules)) == told, "after a valid event the problem is news again")
        #expect(lines(events.take(["payload": ["template": "generic"]], rules: rules)).first?.hasPrefix("notify unnamed true") == true)
    }

    /// Event-born submissions are marked so, and one past the limit is told once, naming the setting.
    @Test func eventsAreBoundedAndAStartPastTheLimitIsTold() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        guard case .submit(let submission)? = events.take(["activity": "washer", "payload": ["template": "generic", "progress": 0.5]], rules: rules).first
        else { Issue.record("not submitted"); return }
        #expect(submission.eventBorn)
        let told = events.refused(submission, rules: rules).map { lines([$0]) }
        #expect(told == ["notify washer true LiveBridge: activity washer: The my_activity_event event for washer was not sent: activity is one more than "
                         + "the 20 activities events may show at once (events.max_activities); end one first"])
        #expect(events.refused(submission, rules: rules) == nil, "told once")
        #expect(rules.eventActivityLimit == 20)
    }

    /// A made-up id is not repeated as a name: its problem is told for an unnamed activity, its value escaped.
    @Test func aHostileIDIsToldUnnamedAndEscaped() throws {
        var events = BlueprintEvents()
        let told = lines(events.take(["activity": "../../admin\r\n", "action": "end"], rules: try rules()))
        #expect(told == [#"notify unnamed true LiveBridge: activity unnamed: The my_activity_event event for unnamed was not sent: activity "#
                         + #""../../admin\u000d\u000a" is not an Aivi slug: letters, digits, _ and -, at most 128 (backend aivi)"#])
    }

    /// Problems are remembered for a bounded number of activities: ever new ids start the record afresh.
    @Test func theRecordOfToldProblemsIsBounded() throws {
        var events = BlueprintEvents()
        let rules = try rules()
        let bad: (String) -> JSONValue = { ["activity": .string($0), "payload": ["template": "generic", "progress": 2]] }
        #expect(events.take(bad("id0"), rules: rules).count == 1)
        #expect(events.take(bad("id0"), rules: rules).isEmpty, "told once")
        for n in 1..<BlueprintEvents.rememberedActivities { _ = events.take(bad("id\(n)"), rules: rules) }
        #expect(events.take(bad("id0"), rules: rules).count == 1, "the full record started afresh")
    }
}
