@testable import Dispatcher
import FakePushServices
import Foundation
import HTTPClient
import JSON
import LiveActivity
import Platform
import Testing

/// PushWard through the dispatcher against the fake speaking its documented contract over real HTTP: a start creates
/// the activity then sends its content, the end is two-phase and its second phase survives a restart, 429 is retried
/// after Retry-After, a rejected key is not retried, and a sixth ongoing activity evicts the lowest priority.
@Suite(.timeLimit(.minutes(1)))
struct PushWardDispatchTests {
    let budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
    let fastRetry = RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(100), lockedWait: .seconds(30))

    func ward(_ service: FakePushService, key: String = "pushward-test-key") -> PushWardBackend {
        PushWardBackend(name: "ward", baseURL: service.baseURL, token: key, client: HTTPClient())
    }

    static func request(_ slug: String, _ kind: PushKind, _ state: String, progress: Double = 0.5, priority: Int = 1,
                        dismissAfter: Duration = .zero) -> BackendRequest {
        .pushWard(backend: "ward", slug: slug, kind: kind, content: ["template": "generic", "state": .string(state), "progress": .double(progress)],
                  priority: priority, sound: nil, creation: ["slug": .string(slug), "name": .string(slug), "priority": .int(priority)],
                  dismissAfter: dismissAfter)
    }

    func calls(_ service: FakePushService) -> [String] {
        service.requests.map { "\($0.method) \($0.path) \($0.body?["state"]?.stringValue ?? "")" }
    }

    @Test func aStartCreatesTheActivityThenAnUpdateAndATwoPhaseEnd() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .change(Self.request("washer", .update, "Rinsing"), urgent: false))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget,
                                .end(Self.request("washer", .end, "Done", progress: 1, dismissAfter: .milliseconds(200))))
        #expect(await service.wait { $0.count == 5 })
        // The update and the completion frame say no state: PushWard keeps the one it holds.
        #expect(calls(service) == ["POST /activities ", "PATCH /activities/washer ongoing", "PATCH /activities/washer ",
                                   "PATCH /activities/washer ", "PATCH /activities/washer ended"])
        #expect(service.requests[3].body?["content"]?["state"] == "Done", "the completion frame, then ended")
        #expect(service.requests[4].at - service.requests[3].at >= 0.19)
        #expect(service.pushWardOngoing().isEmpty)
    }

    @Test func aBoardAndALogAreTakenAndAMalformedBoardIsRefusedWithItsCode() async throws {
        let service = try FakePushService()
        let records = Locked<[Dispatcher.PushRecord]>([])
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        func start(_ slug: String, _ content: JSONValue) -> BackendRequest {
            .pushWard(backend: "ward", slug: slug, kind: .start, content: content, priority: 1, sound: nil,
                      creation: ["slug": .string(slug), "name": .string(slug), "priority": 1], dismissAfter: .zero)
        }
        await dispatcher.submit(activity: "energy", backend: "ward", budget: budget,
                                .start(start("energy", ["template": "board", "tiles": [["label": "Solar", "value": "3.2", "unit": "kWh"]]])))
        await dispatcher.submit(activity: "backup", backend: "ward", budget: budget,
                                .start(start("backup", ["template": "log", "lines": [["text": "Snapshot taken", "level": "info"]]])))
        await dispatcher.submit(activity: "broken", backend: "ward", budget: budget,
                                .start(start("broken", ["template": "board", "tiles": [["label": "Solar", "value": 3.2]]])))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardOngoing() == ["backup", "energy"])
        let refused = try #require(records.withLock { $0.first { $0.activity == "broken" }?.report })
        #expect(refused.outcome == .rejected(DeliveryCode.service("activity.content_invalid")) && refused.status == 422, "a 422 is not retried")
    }

    /// PushWard ends activities itself (`stale_ttl`, a countdown's end): an update or a completion frame after that
    /// keeps it ended rather than starting it again on the phone; the end still says ended.
    @Test func whatPushWardEndedItselfStaysEnded() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        let start = BackendRequest.pushWard(backend: "ward", slug: "washer", kind: .start, content: ["template": "generic", "state": "Washing", "progress": 0.5],
                                            priority: 1, sound: nil, creation: ["slug": "washer", "name": "washer", "priority": 1, "stale_ttl": 60],
                                            dismissAfter: .zero)
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .start(start))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardState("washer") == "ongoing")
        service.advancePushWardClock(by: 61)
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .change(Self.request("washer", .update, "Rinsing"), urgent: false))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardState("washer") == "ended", "stale for 61 s: ended by PushWard, and the update did not revive it")
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget,
                                .end(Self.request("washer", .end, "Done", progress: 1, dismissAfter: .milliseconds(50))))
        #expect(await service.wait { $0.count == 5 })
        #expect(service.pushWardState("washer") == "ended")
        #expect(service.pushWardOngoing().isEmpty)
    }

    /// A sixth ongoing activity evicts the lowest priority, which PushWard marks preempted: an update without a state
    /// is refused there (422, not retried), and is not a start.
    @Test func anEvictedActivityIsPreemptedAndAnUpdateDoesNotTakeItsPlaceBack() async throws {
        let service = try FakePushService()
        let records = Locked<[Dispatcher.PushRecord]>([])
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for (i, slug) in ["low", "a", "b", "c", "d", "e"].enumerated() {
            await dispatcher.submit(activity: slug, backend: "ward", budget: budget, .start(Self.request(slug, .start, "On", priority: i == 0 ? 0 : 5)))
            await dispatcher.waitUntilQuiet()
        }
        #expect(service.pushWardState("low") == "preempted")
        await dispatcher.submit(activity: "low", backend: "ward", budget: budget, .change(Self.request("low", .update, "Still on", priority: 0), urgent: false))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardState("low") == "preempted")
        #expect(service.pushWardOngoing() == ["a", "b", "c", "d", "e"])
        let refused = try #require(records.withLock { $0.last { $0.activity == "low" }?.report })
        #expect(refused.status == 422 && refused.outcome == .rejected(DeliveryCode.service("activity.state_invalid")))
    }

    /// An update for an activity PushWard no longer has. Shown by this process, PushWard ended and removed it itself
    /// (ended_ttl after its own end): refused, not started again. Unknown to the process (after a restart, perhaps
    /// between a start's two requests): created and started, rather than lost.
    @Test func anUpdateForAnActivityPushWardNoLongerHasIsNotRevivedUnlessUnknown() async throws {
        let service = try FakePushService()
        let records = Locked<[Dispatcher.PushRecord]>([])
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await dispatcher.waitUntilQuiet()
        service.forgetPushWardActivity("washer")
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .change(Self.request("washer", .update, "Rinsing"), urgent: false))
        await dispatcher.waitUntilQuiet()
        #expect(calls(service) == ["POST /activities ", "PATCH /activities/washer ongoing", "PATCH /activities/washer "])
        #expect(service.pushWardOngoing().isEmpty)
        #expect(records.withLock { $0.last?.report.status } == 404)
        // A restarted LiveBridge (a new backend: nothing shown yet) goes on with updates: the activity is made again.
        let report = await ward(service).deliver(Self.request("washer", .update, "Spinning"), kind: .update)
        #expect(report.outcome == .delivered)
        #expect(Array(calls(service).suffix(3)) == ["PATCH /activities/washer ongoing", "POST /activities ", "PATCH /activities/washer ongoing"])
        #expect(service.pushWardOngoing() == ["washer"])
    }

    /// PATCH is a merge patch and PushWard keeps an ended activity's content: a new start nulls every field LiveBridge
    /// may send that it does not set, so nothing of the earlier run stays on the phone.
    @Test func aNewStartLeavesNothingOfTheLastRun() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        func request(_ kind: PushKind, _ content: JSONValue) -> BackendRequest {
            .pushWard(backend: "ward", slug: "oven", kind: kind, content: content, priority: 1, sound: nil,
                      creation: ["slug": "oven", "name": "oven", "priority": 1], dismissAfter: .zero)
        }
        await dispatcher.submit(activity: "oven", backend: "ward", budget: budget,
                                .start(request(.start, ["template": "generic", "subtitle": "old run", "live_progress": true, "end_date": 1_900_000_000, "progress": 0.5])))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "oven", backend: "ward", budget: budget, .end(request(.end, ["template": "generic", "progress": 1])))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "oven", backend: "ward", budget: budget, .start(request(.start, ["template": "generic", "progress": 0.1])))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardContent("oven") == ["template": "generic", "progress": 0.1])
    }

    /// The monthly quota is the account's: once one backend hears it is spent, another with the same key sends nothing.
    @Test func aSpentQuotaStopsEveryBackendOfTheKey() async throws {
        let service = try FakePushService()
        let pacers = PacerRegistry()
        let a = PushWardBackend(name: "ward", baseURL: service.baseURL, token: "pushward-test-key", client: HTTPClient(), pacers: pacers)
        let b = PushWardBackend(name: "ward2", baseURL: service.baseURL + "/", token: "pushward-test-key", client: HTTPClient(), pacers: pacers)
        #expect(await a.deliver(Self.request("one", .start, "On"), kind: .start).outcome == .delivered)
        service.limitPushWardUpdates(0)
        #expect(await a.deliver(Self.request("one", .update, "Still"), kind: .update).status == 429)
        let sent = service.requests.count
        let second = await b.deliver(Self.request("two", .start, "On"), kind: .start)
        #expect(second.outcome == .rejected(PushWardBackend.code(.allowanceSpent)) && service.requests.count == sent, "refused here, nothing sent")
    }

    /// A two-phase end whose final frame is refused (here: preempted, 422) still ends: its second phase goes.
    @Test func aRefusedFinalFrameStillEnds() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for (i, slug) in ["low", "a", "b", "c", "d", "e"].enumerated() {
            await dispatcher.submit(activity: slug, backend: "ward", budget: budget, .start(Self.request(slug, .start, "On", priority: i == 0 ? 0 : 5)))
            await dispatcher.waitUntilQuiet()
        }
        #expect(service.pushWardState("low") == "preempted")
        await dispatcher.submit(activity: "low", backend: "ward", budget: budget,
                                .end(Self.request("low", .end, "Done", progress: 1, priority: 0, dismissAfter: .milliseconds(50))))
        #expect(await service.wait { $0.last?.path == "/activities/low" && $0.last?.body?["state"] == "ended" })
        #expect(service.pushWardState("low") == "ended")
    }

    @Test func requestsArePacedToItsAllowance() async throws {
        let service = try FakePushService()
        // Two requests per 300 ms stands for its 200 a minute: a start's two requests, then the update waits.
        let paced = PushWardBackend(name: "ward", baseURL: service.baseURL, token: "pushward-test-key", client: HTTPClient(),
                                    window: RequestWindow(limit: 2, seconds: 0.3))
        let dispatcher = Dispatcher(backends: [paced], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .change(Self.request("washer", .update, "Rinsing"), urgent: false))
        await dispatcher.waitUntilQuiet()
        #expect(calls(service) == ["POST /activities ", "PATCH /activities/washer ongoing", "PATCH /activities/washer "])
        #expect(service.requests[2].at - service.requests[0].at >= 0.2, "paced (arrival times: the margin allows a late first arrival)")
    }

    @Test func aRateLimitIsRetriedAfterRetryAfterAndABadKeyIsNot() async throws {
        let service = try FakePushService()
        service.script([.init(status: 429, body: #"{"code":"rate_limited","detail":"200 requests per minute"}"#, headers: ["Retry-After": "1"])])
        let records = Locked<[Dispatcher.PushRecord]>([])
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await dispatcher.waitUntilQuiet()
        #expect(calls(service) == ["POST /activities ", "POST /activities ", "PATCH /activities/washer ongoing"])
        #expect(service.requests[1].at - service.requests[0].at >= 0.95, "Retry-After: 1 honoured")
        #expect(records.withLock { $0.map { $0.report.outcome } } == [.retry(after: .seconds(1)), .delivered])

        let rejected = try FakePushService()
        let refused = Dispatcher(backends: [ward(rejected, key: "revoked")], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let refusedRun = Task { await refused.run() }
        defer { refusedRun.cancel() }
        await refused.submit(activity: "washer", backend: "ward", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await refused.waitUntilQuiet()
        #expect(rejected.requests.count == 1)
        let last = try #require(records.withLock { $0.last?.report })
        #expect(last.outcome == .rejected(DeliveryCode.service("token.invalid")) && last.status == 401, "401: the key, for good (not retried)")
    }

    @Test func theSecondPhaseOfAnEndIsKeptInStateAndSentAfterARestart() async throws {
        let service = try FakePushService()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-pushward-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let first = Dispatcher(backends: [ward(service)], retry: fastRetry, stateFile: try DeliveryStateFile(directory: directory))
            let firstRun = Task { await first.run() }
            defer { firstRun.cancel() }
            await first.submit(activity: "washer", backend: "ward", budget: budget, .start(Self.request("washer", .start, "Washing")))
            await first.waitUntilQuiet()
            await first.submit(activity: "washer", backend: "ward", budget: budget,
                                .end(Self.request("washer", .end, "Done", progress: 1, dismissAfter: .seconds(3600))))
            await first.waitUntilQuiet()
            #expect(await first.phase(activity: "washer", target: "ward") == .dismissing)
            _ = await first.flush(deadline: .seconds(1))
        }
        let path = directory + "/state.json"
        let saved = try String(contentsOfFile: path, encoding: .utf8)
        let dismiss = try JSONParser.parse(saved)["activities"]?["washer@ward"]?["dismiss"]
        #expect(dismiss?["kind"] == "pushward" && dismiss?["method"] == "PATCH" && dismiss?["target"] == "/activities/washer")
        // LiveBridge was down past its time: the restarted dispatcher sends it at once.
        try saved.replacingOccurrences(of: "\"at\":\(dismiss!["at"]!.jsonText)", with: "\"at\":\(Date().timeIntervalSince1970 - 1)")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let restarted = Dispatcher(backends: [ward(service)], retry: fastRetry, stateFile: try DeliveryStateFile(directory: directory))
        let restartedRun = Task { await restarted.run() }
        defer { restartedRun.cancel() }
        #expect(await restarted.relayRemaining.isEmpty, "a pending PushWard clear spends no Home Assistant relay (its target is a path, not a device)")
        await restarted.resume()
        #expect(await service.wait { $0.last?.body?["state"] == "ended" })
        #expect(calls(service).last == "PATCH /activities/washer ended")
    }

    /// The fake keeps PushWard's rule: five ongoing per key; a sixth evicts the lowest priority.
    @Test func aSixthOngoingActivityEvictsTheLowestPriority() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [ward(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        // Five first, then the sixth: sent together, their order at the service is the network's, and which one is
        // the sixth with it (CI once saw a2 arrive last and a1 evicted).
        for n in 1...5 {
            await dispatcher.submit(activity: "a\(n)", backend: "ward", budget: budget,
                                    .start(Self.request("a\(n)", .start, "Running", priority: n == 2 ? 0 : 5)))
        }
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "a6", backend: "ward", budget: budget, .start(Self.request("a6", .start, "Running", priority: 5)))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardOngoing() == ["a1", "a3", "a4", "a5", "a6"])
    }
}

/// PushWard's PATCH is a merge patch and its free plan has a monthly quota: what its OpenAPI document says, walked
/// against the fake that applies both.
@Suite(.timeLimit(.minutes(1)))
struct PushWardContractTests {
    let budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
    let fastRetry = RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(100), lockedWait: .seconds(30))

    static func request(_ kind: PushKind, _ content: JSONValue) -> BackendRequest {
        .pushWard(backend: "ward", slug: "washer", kind: kind, content: content, priority: 1, sound: nil,
                  creation: ["slug": "washer", "name": "washer", "priority": 1], dismissAfter: .zero)
    }

    @Test func aFieldThatDropsOutOfAFrameIsClearedNotKeptOnThePhone() async throws {
        let service = try FakePushService()
        let backend = PushWardBackend(name: "ward", baseURL: service.baseURL, token: "pushward-test-key", client: HTTPClient())
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget,
                                .start(Self.request(.start, ["template": "generic", "state": "Washing", "subtitle": "Cotton 40", "progress": 0.2])))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget,
                                .change(Self.request(.update, ["template": "generic", "state": "Rinsing", "progress": 0.6]), urgent: false))
        await dispatcher.waitUntilQuiet()
        #expect(service.pushWardContent("washer") == ["template": "generic", "state": "Rinsing", "progress": 0.6], "no stale subtitle")
        #expect(service.requests.last?.body?["content"]?["subtitle"] == .null, "sent as null")
    }

    @Test func aSpentMonthlyQuotaStopsPushesUntilTheMonthTurns() async throws {
        let service = try FakePushService()
        service.limitPushWardUpdates(1)
        let records = Locked<[Dispatcher.PushRecord]>([])
        let backend = PushWardBackend(name: "ward", baseURL: service.baseURL, token: "pushward-test-key", client: HTTPClient())
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "ward", budget: budget,
                                .start(Self.request(.start, ["template": "generic", "state": "Washing", "progress": 0.2])))
        await dispatcher.waitUntilQuiet()
        for progress in [0.3, 0.4, 0.5] {
            await dispatcher.submit(activity: "washer", backend: "ward", budget: budget,
                                    .change(Self.request(.update, ["template": "generic", "state": "Washing", "progress": .double(progress)]), urgent: false))
            await dispatcher.waitUntilQuiet()
        }
        #expect(records.withLock { $0.dropFirst().map(\.report.outcome) } == Array(repeating: .rejected(PushWardBackend.code(.allowanceSpent)), count: 3))
        let patches = service.requests.filter { $0.method == "PATCH" }.count
        #expect(patches == 2, "after the 429 quota.exceeded nothing more is sent: \(patches) PATCHes")
        #expect(PushWardBackend.nextMonth(after: 1_795_996_800) == 1_796_083_200, "2026-11-30 → 2026-12-01 UTC")
    }
}
