import Dispatcher
import FakePushServices
import Foundation
import HTTPClient

import Testing
import LiveActivity
import JSON

/// The dispatcher against fake Aivi and Island Pulse services over real HTTP on 127.0.0.1.
@Suite(.timeLimit(.minutes(1)))
struct DispatcherTests {
    /// Budgets short enough for real time: 50 ms of quiet, 100 ms apart.
    let budget = UpdateBudget(debounce: .milliseconds(50), maxWait: .milliseconds(300), minInterval: .milliseconds(100))
    let fastRetry = RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(100), lockedWait: .seconds(30))

    func aivi(_ service: FakePushService) -> HTTPPushBackend {
        HTTPPushBackend(name: "aivi", service: AiviSchema.definition, baseURL: service.baseURL, token: "aivi-test-token", client: HTTPClient())
    }

    func pulse(_ service: FakePushService, id: String = "pulse-test-id", free: Bool = false) -> HTTPPushBackend {
        HTTPPushBackend(name: "pulse", service: IslandPulseSchema.definition, baseURL: service.baseURL, token: id, allowsOneActiveJob: free, client: HTTPClient())
    }

    func aiviRequest(_ slug: String, _ state: String, _ label: String) -> BackendRequest {
        BackendRequest(backend: "aivi", kind: .aivi, method: "PATCH", target: "/activity/\(slug)",
                       body: ["state": .string(state), "content": ["template": "generic", "progress": 0.5, "state": .string(label)]])
    }

    func pulseRequest(_ job: String, _ action: String, _ message: String) -> BackendRequest {
        BackendRequest(backend: "pulse", kind: .islandpulse, method: "POST", target: "/notify",
                       body: ["job_id": .string(job), "action": .string(action), "message": .string(message)])
    }

    @Test func startUpdatesAndEndReachAiviInOrderWithItsContract() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [aivi(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        // A debounce far longer than five submits take even under ThreadSanitizer on a busy machine (50 ms was not):
        // the five changes always fall in one quiet window.
        let budget = UpdateBudget(debounce: .seconds(1), maxWait: .seconds(10), minInterval: .milliseconds(100))
        await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .start(aiviRequest("washer", "ONGOING", "s")))
        for n in 1...5 { await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .change(aiviRequest("washer", "ONGOING", "u\(n)"), urgent: false)) }
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .end(aiviRequest("washer", "IDLE", "done")))
        await dispatcher.waitUntilQuiet()
        let seen = service.requests
        #expect(seen.map { $0.body?["content"]?["state"]?.stringValue } == ["s", "u5", "done"])
        #expect(seen.allSatisfy { $0.method == "PATCH" && $0.path == "/activity/washer" && $0.authorization == "Token aivi-test-token" })
        #expect(seen.allSatisfy { $0.userAgent == "livebridge/0.1.0" })
        #expect(seen.map { $0.body?["state"]?.stringValue } == ["ONGOING", "ONGOING", "IDLE"])
        #expect(await dispatcher.counters.debounced == 4)
    }

    @Test func aConflictOnStartContinuesAsAnUpdate() async throws {
        let service = try FakePushService()
        service.script([.init(status: 409, body: #"{"error":"ACTIVITY_ALREADY_RUNNING"}"#)])
        let dispatcher = Dispatcher(backends: [pulse(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "deploy", backend: "pulse", budget: budget, .start(pulseRequest("deploy", "start", "go")))
        await dispatcher.waitUntilQuiet()
        #expect(service.requests.count == 2)
        #expect(await dispatcher.phase(activity: "deploy", target: "pulse") == .running)
    }

    @Test func serverErrorsAndRateLimitsAreRetriedAndOtherClientErrorsAreNot() async throws {
        let service = try FakePushService()
        service.script([.init(status: 502, body: #"{"error":"APNS_PUSH_FAILED"}"#), .init(status: 429, headers: ["Retry-After": "0.05"])])
        var records: [Dispatcher.PushRecord] = []
        let collected = RecordBox()
        let dispatcher = Dispatcher(backends: [pulse(service)], retry: fastRetry, onPush: { collected.append($0) })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "job", backend: "pulse", budget: budget, .start(pulseRequest("job", "start", "m")))
        await dispatcher.waitUntilQuiet()
        records = collected.all
        #expect(records.map { $0.report.status } == [502, 429, 200])
        #expect(records.first?.report.code == DeliveryCode.service("APNS_PUSH_FAILED"))

        service.script([.init(status: 400, body: #"{"error":"INVALID_ACTION"}"#)])
        await dispatcher.submit(activity: "job", backend: "pulse", budget: budget, .change(pulseRequest("job", "update", "m2"), urgent: true))
        await dispatcher.waitUntilQuiet()
        // Whether the kept-alive connection carried it is not the point (on a loaded machine it had closed: 1 opened).
        let last = collected.all.last?.report
        #expect(last?.outcome == .rejected(DeliveryCode.service("INVALID_ACTION")) && last?.status == 400 && last?.code == DeliveryCode.service("INVALID_ACTION"))
        #expect(service.requests.count == 4)
    }

    @Test func theFreeTierKeepsOneJobAndStartsTheNextWhenItEnds() async throws {
        let service = try FakePushService(accounts: [FakeAccount(.islandpulse, "pulse-test-id", plan: .freeTier)])
        let logs = LogBox()
        let dispatcher = Dispatcher(backends: [pulse(service, free: true)], retry: fastRetry, log: { logs.append($0) })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "first", backend: "pulse", budget: budget, .start(pulseRequest("first", "start", "1")))
        await dispatcher.submit(activity: "second", backend: "pulse", budget: budget, .start(pulseRequest("second", "start", "2")))
        #expect(await service.wait { $0.count == 1 })
        #expect(await dispatcher.phase(activity: "second", target: "pulse") == .idle)
        await dispatcher.submit(activity: "first", backend: "pulse", budget: budget, .end(pulseRequest("first", "end", "1")))
        #expect(await service.wait { $0.count == 3 })
        #expect(service.requests.map { "\($0.body?["job_id"]?.stringValue ?? "") \($0.body?["action"]?.stringValue ?? "")" }
                == ["first start", "first end", "second start"])
        #expect(logs.all == ["activity second waits: backend pulse is on the free tier and first is active"])
    }

    @Test func anEndSurvivesAnOutage() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [aivi(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "w", backend: "aivi", budget: budget, .start(aiviRequest("w", "ONGOING", "s")))
        await dispatcher.waitUntilQuiet()
        service.script(Array(repeating: .init(status: 503), count: 6))
        await dispatcher.submit(activity: "w", backend: "aivi", budget: budget, .end(aiviRequest("w", "IDLE", "e")))
        await dispatcher.waitUntilQuiet()
        #expect(service.requests.count == 8)
        #expect(service.requests.last?.body?["state"] == "IDLE")
        #expect(await dispatcher.phase(activity: "w", target: "aivi") == .idle)
    }

    @Test func afterARestartARunningActivityContinuesWithUpdatesNotASecondStart() async throws {
        let service = try FakePushService()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-dispatch-\(UUID().uuidString)").path
        do {
            let dispatcher = Dispatcher(backends: [pulse(service)], retry: fastRetry, stateFile: try DeliveryStateFile(directory: directory))
            let dispatcherRun = Task { await dispatcher.run() }
            defer { dispatcherRun.cancel() }
            await dispatcher.submit(activity: "job", backend: "pulse", budget: budget, .start(pulseRequest("job", "start", "before")))
            await dispatcher.waitUntilQuiet()
        }
        let restarted = Dispatcher(backends: [pulse(service)], retry: fastRetry, stateFile: try DeliveryStateFile(directory: directory))
        let restartedRun = Task { await restarted.run() }
        defer { restartedRun.cancel() }
        #expect(await restarted.runningActivities.map(\.activity) == ["job"])
        // The rules say it is active: the daemon submits a start; the lane, resumed as running, sends an update.
        await restarted.submit(activity: "job", backend: "pulse", budget: budget, .start(pulseRequest("job", "update", "after")))
        await restarted.waitUntilQuiet()
        // The new digest is written lazily (at most once a second); a flush, as at shutdown, writes it now.
        #expect(await restarted.flush(deadline: .seconds(1)))
        #expect(try DeliveryStateFile(directory: directory).load { _ in }.entries["job@pulse"]?.digest == DeliveryState.digest(pulseRequest("job", "update", "after").bodyBytes))
        #expect(service.requests.map { $0.body?["message"]?.stringValue } == ["before", "after"])
        #expect(service.requests.last?.body?["action"] == "update")
        // The same content again is not sent: the digest survived the restart.
        let third = Dispatcher(backends: [pulse(service)], retry: fastRetry, stateFile: try DeliveryStateFile(directory: directory))
        let thirdRun = Task { await third.run() }
        defer { thirdRun.cancel() }
        await third.submit(activity: "job", backend: "pulse", budget: budget, .change(pulseRequest("job", "update", "after"), urgent: false))
        await third.waitUntilQuiet()
        #expect(service.requests.count == 2)
        #expect(await third.counters.deduplicated == 1)
    }

    @Test func twoHundredActivitiesAcrossThreeBackendsRunInParallelInOrder() async throws {
        let service = try FakePushService(accounts: [FakeAccount(.islandpulse, "pulse-a"), FakeAccount(.islandpulse, "pulse-b")])
        let dispatcher = Dispatcher(backends: [aivi(service), pulse(service, id: "pulse-a"),
                                               HTTPPushBackend(name: "pulse2", service: IslandPulseSchema.definition, baseURL: service.baseURL, token: "pulse-b", client: HTTPClient())],
                                    retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for n in 0..<200 {
            switch n % 3 {
            case 0: await dispatcher.submit(activity: "a\(n)", backend: "aivi", budget: budget, .start(aiviRequest("a\(n)", "ONGOING", "s")))
            case 1: await dispatcher.submit(activity: "a\(n)", backend: "pulse", budget: budget, .start(pulseRequest("a\(n)", "start", "s")))
            default: await dispatcher.submit(activity: "a\(n)", backend: "pulse2", budget: budget, .start(pulseRequest("a\(n)", "start", "s")))
            }
        }
        // Each HTTP backend sends a few at a time (`sendsAtOnce`); the others wait their turn. An end given before its
        // start went out would cancel both (nothing shown): the ends follow once the starts are through.
        await dispatcher.waitUntilQuiet()
        #expect(service.requests.count == 200)
        for n in 0..<200 {
            switch n % 3 {
            case 0: await dispatcher.submit(activity: "a\(n)", backend: "aivi", budget: budget, .end(aiviRequest("a\(n)", "IDLE", "e")))
            case 1: await dispatcher.submit(activity: "a\(n)", backend: "pulse", budget: budget, .end(pulseRequest("a\(n)", "end", "e")))
            default: await dispatcher.submit(activity: "a\(n)", backend: "pulse2", budget: budget, .end(pulseRequest("a\(n)", "end", "e")))
            }
        }
        await dispatcher.waitUntilQuiet()
        let requests = service.requests
        #expect(requests.count == 400)
        for n in 0..<200 {
            let mine = requests.filter { $0.path == "/activity/a\(n)" || $0.body?["job_id"]?.stringValue == "a\(n)" }
            let kinds = mine.map { $0.body?["action"]?.stringValue ?? $0.body?["state"]?.stringValue ?? "" }
            #expect(kinds == ["start", "end"] || kinds == ["ONGOING", "IDLE"], "a\(n): \(kinds)")
        }
    }
}

final class RecordBox: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [Dispatcher.PushRecord] = []
    func append(_ record: Dispatcher.PushRecord) { lock.withLock { records.append(record) } }
    var all: [Dispatcher.PushRecord] { lock.withLock { records } }
}

final class LogBox: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
