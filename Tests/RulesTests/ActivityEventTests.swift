import Foundation
import JSON
import Rules
import Testing
import LiveActivity

/// Blueprint events: the same checks as rule-made payloads, the same requests.
struct ActivityEventTests {
    func rules() throws -> RulesFile {
        let folder = try ConfigFolder(["livebridge.yaml": """
            backends:
              aivi: { type: aivi, token: t }
              pulse: { type: islandpulse, token: p, tier: free }
              phone: { type: homeassistant, service: notify.mobile_app_phone }
            defaults: { backend: aivi }
            events: { type: my_activity_event }
            """])
        return try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
    }

    @Test func theEventTypeIsConfigurableAndActivitiesAreOptional() throws {
        #expect(try rules().eventType == "my_activity_event")
        #expect(try rules().activities.isEmpty)
    }

    @Test func anAiviEventUsesTheDefaultBackend() throws {
        let event = try ActivityEvent.decode(["activity": "washer", "action": "ONGOING", "payload": ["template": "generic", "progress": "0.5"]],
                                             rules: try rules()).get()
        #expect(event.action == .show)
        #expect(event.request.target == "/activity/washer")
        #expect(event.request.body == ["state": "ONGOING", "content": ["template": "generic", "progress": 0.5]])
    }

    @Test func anIslandPulseEventIsAutoRoutedAndTheFreeTierUsesTheDefaultLayout() throws {
        let show = try ActivityEvent.decode(["activity": "backup", "backend": "pulse", "payload": ["message": "Copying", "layout": "progress", "progress": 40]],
                                            rules: try rules()).get()
        #expect(show.request.body == ["job_id": "backup", "message": "Copying", "layout": "default", "progress": 0.4])
        let end = try ActivityEvent.decode(["activity": "backup", "backend": "pulse", "action": "end"], rules: try rules()).get()
        #expect(end.request.body == ["job_id": "backup", "action": "end", "layout": "default"])
    }

    @Test func aHomeAssistantEventBecomesALiveUpdateAndItsEndClearsIt() throws {
        let end = try ActivityEvent.decode(["activity": "laundry", "backend": "phone", "action": "end"], rules: try rules()).get()
        #expect(end.request.body["message"] == "clear_notification" && end.request.body["data"]?["tag"] == "laundry")
        #expect(end.request.body["data"]?["dismissal_date"]?.intValue != nil && end.request.dismissal == nil)
    }

    @Test func everyProblemNamesItsField() throws {
        guard case .failure(let failure) = ActivityEvent.decode(["action": "pause", "backend": "nope"], rules: try rules()) else {
            Issue.record("accepted"); return
        }
        #expect(failure.issues.map(\.description) == [
            "activity: is required: the slug, job_id or tag of the activity",
            "action: unknown action \"pause\"; expected start, update, end, ONGOING or IDLE",
            "backend: no backend named \"nope\"; the rules declare: aivi, phone, pulse",
            "payload: is required to start or update",
        ])
        guard case .failure(let bad) = ActivityEvent.decode(["activity": "w", "payload": ["template": "generic", "progress": 2]], rules: try rules()) else {
            Issue.record("accepted"); return
        }
        #expect(bad.issues.map(\.description) == ["payload.progress: 2 is out of range 0–1"])
    }

    /// An id becomes the path, job id or tag at its backend: one outside the backend's grammar goes nowhere, and is not
    /// repeated as the activity's name (the failure is unnamed).
    @Test(arguments: [
        ("../../admin", "aivi", #"activity: "../../admin" is not an Aivi slug: letters, digits, _ and -, at most 128 (backend aivi)"#),
        ("washer#dryer", "aivi", #"activity: "washer#dryer" is not an Aivi slug: letters, digits, _ and -, at most 128 (backend aivi)"#),
        ("washer\r\nX: 1", "aivi", #"activity: "washer\u000d\u000aX: 1" is not an Aivi slug: letters, digits, _ and -, at most 128 (backend aivi)"#),
        ("a/b", "pulse", #"activity: job_id "a/b" may hold only letters, digits, _ and - (backend pulse)"#),
        ("washer 1", "phone", #"activity: "washer 1" holds " "; a tag is letters, digits, _ and - (backend phone)"#),
    ])
    func anIDOutsideItsBackendsGrammarIsRefused(id: String, backend: String, problem: String) throws {
        let data: JSONValue = ["activity": .string(id), "backend": .string(backend), "action": "end"]
        guard case .failure(let failure) = ActivityEvent.decode(data, rules: try rules()) else { Issue.record("\(id) accepted"); return }
        #expect(failure.issues.map(\.description) == [problem])
        #expect(failure.activity == "")
    }

    @Test func howManyActivitiesEventsMayShowIsConfigurable() throws {
        let folder = try ConfigFolder(["a.yaml": "backends: { aivi: { type: aivi, token: t } }\nevents: { max_activities: 5 }\n",
                                       "b.yaml": "backends: { aivi: { type: aivi, token: t } }\nevents: { max_activities: 0 }\n"])
        #expect(try RulesLoader.load(file: folder.file("a.yaml"), environment: [:]).get().eventActivityLimit == 5)
        guard case .failure(let errors) = RulesLoader.load(file: folder.file("b.yaml"), environment: [:]) else { Issue.record("0 accepted"); return }
        #expect(errors.errors.map(\.message) == ["\"0\" is not a number of activities from 1 to 500"])
    }
}
