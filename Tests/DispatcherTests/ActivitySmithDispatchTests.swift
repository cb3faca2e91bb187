import Dispatcher
import FakePushServices
import Foundation
import HTTPClient
import LiveActivity
import Platform
import Testing
import JSON

/// ActivitySmith through the dispatcher against the fake speaking its stream contract over real HTTP: PUT starts and
/// updates the stream, DELETE ends it with its final content and auto-dismissal; 429 is retried after Retry-After; a
/// fifth live stream is refused (four at once) and not retried; a burst is paced to the requests a minute it allows;
/// a stream its user paused answers `paused`.
@Suite(.timeLimit(.minutes(1)))
struct ActivitySmithDispatchTests {
    let budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
    let fastRetry = RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(100), lockedWait: .seconds(30))

    func smith(_ service: FakePushService, window: RequestWindow = RequestWindow(limit: 60, seconds: 60)) -> ActivitySmithBackend {
        ActivitySmithBackend(name: "smith", baseURL: service.baseURL, token: "activitysmith-test-key", client: HTTPClient(), window: window)
    }

    static func request(_ key: String, _ kind: PushKind, _ title: String, percentage: Double = 40) -> BackendRequest {
        .activitySmith(backend: "smith", key: key, kind: kind, contentState: ["type": "progress", "title": .string(title), "percentage": .double(percentage)],
                       channels: [], dismissAfter: .seconds(300))
    }

    @Test func aStreamStartsUpdatesAndEndsWithItsFinalContent() async throws {
        let service = try FakePushService()
        let dispatcher = Dispatcher(backends: [smith(service)], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "smith", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await dispatcher.waitUntilQuiet()
        #expect(service.activitySmithStreams() == ["washer"])
        await dispatcher.submit(activity: "washer", backend: "smith", budget: budget, .change(Self.request("washer", .update, "Rinsing", percentage: 70), urgent: false))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "smith", budget: budget, .end(Self.request("washer", .end, "Done", percentage: 100)))
        await dispatcher.waitUntilQuiet()
        #expect(service.requests.map { "\($0.method) \($0.body?["content_state"]?["title"]?.stringValue ?? "")" } == ["PUT Washing", "PUT Rinsing", "DELETE Done"])
        #expect(service.requests.last?.body?["content_state"]?["auto_dismiss_seconds"] == 300)
        #expect(service.activitySmithStreams().isEmpty)
    }

    /// Its limit of four at once: the fifth start is answered 429 "Live Activity limit reached" and waits for a place
    /// (not retried hot); one of ours ending lets it start at once.
    @Test func aRateLimitIsRetriedAndAFifthStreamWaitsForAPlace() async throws {
        let service = try FakePushService()
        service.script([.init(status: 429, body: #"{"error":"rate_limited"}"#, headers: ["Retry-After": "1"])])
        let (locked, lockedSeen) = AsyncStream.makeStream(of: Void.self)
        let records = Locked<[Dispatcher.PushRecord]>([])
        let dispatcher = Dispatcher(backends: [smith(service)], retry: fastRetry, onPush: { record in
            records.withLock { $0.append(record) }
            if record.report.code?.meaning == .tooManyActivities { lockedSeen.yield() }
        })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for n in 1...4 {
            await dispatcher.submit(activity: "s\(n)", backend: "smith", budget: budget, .start(Self.request("s\(n)", .start, "Job \(n)")))
            await dispatcher.waitUntilQuiet()
        }
        #expect(records.withLock { $0.first?.report.outcome } == .retry(after: .seconds(1)))
        await dispatcher.submit(activity: "s5", backend: "smith", budget: budget, .start(Self.request("s5", .start, "Job 5")))
        var waiting = locked.makeAsyncIterator()
        _ = await waiting.next()
        #expect(records.withLock { $0.last?.report } == DeliveryReport(.locked(for: nil), status: 429, code: .known(.tooManyActivities, of: ActivitySmithSchema.definition)))
        #expect(service.activitySmithStreams() == ["s1", "s2", "s3", "s4"])
        await dispatcher.submit(activity: "s1", backend: "smith", budget: budget, .end(Self.request("s1", .end, "Job 1")))
        await dispatcher.waitUntilQuiet()
        #expect(service.activitySmithStreams() == ["s2", "s3", "s4", "s5"], "s1's end let s5 start")
        #expect(records.withLock { $0.filter { $0.report.code?.meaning == .tooManyActivities }.count } == 1, "not retried hot")
    }

    @Test func aBurstIsPacedToTheAllowanceAcrossLanes() async throws {
        let service = try FakePushService()
        // Three requests per 300 ms stands for its sixty a minute: six streams starting together take two windows.
        let dispatcher = Dispatcher(backends: [smith(service, window: RequestWindow(limit: 3, seconds: 0.3))], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for n in 1...4 {
            await dispatcher.submit(activity: "s\(n)", backend: "smith", budget: budget, .start(Self.request("s\(n)", .start, "Job \(n)")))
        }
        await dispatcher.waitUntilQuiet()
        for n in 1...2 {
            await dispatcher.submit(activity: "s\(n)", backend: "smith", budget: budget, .change(Self.request("s\(n)", .update, "Job \(n)", percentage: 80), urgent: false))
        }
        await dispatcher.waitUntilQuiet()
        let times = service.requests.map(\.at).sorted()
        #expect(times.count == 6 && service.activitySmithStreams() == ["s1", "s2", "s3", "s4"], "none refused or retried")
        #expect(times[3] - times[0] >= 0.2 && times[5] - times[2] >= 0.2, "no more than three in any 300 ms (arrival times: the margin allows a late arrival)")
    }

    /// Its 60 a minute are per account: two backends with one API key are paced together.
    @Test func twoBackendsWithOneKeyShareItsAllowance() async throws {
        let service = try FakePushService()
        let pacers = PacerRegistry()
        let window = RequestWindow(limit: 3, seconds: 0.3)
        let a = ActivitySmithBackend(name: "smith", baseURL: service.baseURL, token: "activitysmith-test-key", client: HTTPClient(), window: window, pacers: pacers)
        let b = ActivitySmithBackend(name: "smith2", baseURL: service.baseURL, token: "activitysmith-test-key", client: HTTPClient(), window: window, pacers: pacers)
        let dispatcher = Dispatcher(backends: [a, b], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for n in 1...2 {
            await dispatcher.submit(activity: "a\(n)", backend: "smith", budget: budget, .start(Self.request("a\(n)", .start, "A \(n)")))
            await dispatcher.submit(activity: "b\(n)", backend: "smith2", budget: budget, .start(Self.request("b\(n)", .start, "B \(n)")))
        }
        await dispatcher.waitUntilQuiet()
        let times = service.requests.map(\.at).sorted()
        // Times are when the fake took each request: the first may arrive late on a loaded machine, so the margin is
        // wide; unpaced, all four arrive within milliseconds.
        #expect(times.count == 4 && times[3] - times[0] >= 0.2, "no more than three in any 300 ms across both backends")
    }

    @Test func aPausedStreamIsDeliveredAndReportedAsPaused() async throws {
        let service = try FakePushService()
        let records = Locked<[Dispatcher.PushRecord]>([])
        let dispatcher = Dispatcher(backends: [smith(service)], retry: fastRetry, onPush: { record in records.withLock { $0.append(record) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "smith", budget: budget, .start(Self.request("washer", .start, "Washing")))
        await dispatcher.waitUntilQuiet()
        service.pauseActivitySmithStream("washer")
        await dispatcher.submit(activity: "washer", backend: "smith", budget: budget, .change(Self.request("washer", .update, "Rinsing", percentage: 70), urgent: false))
        await dispatcher.waitUntilQuiet()
        let last = try #require(records.withLock { $0.last?.report })
        #expect(last.outcome == .delivered && last.code?.meaning == .paused, "answered 200 paused: not retried, said in the log")
        #expect(await dispatcher.phase(activity: "washer", target: "smith") == .running)
    }
}

/// The allowance's arithmetic on a fake clock.
struct RequestWindowTests {
    @Test func theRequestPastTheLimitWaitsForTheOldestToLeaveTheWindow() {
        var window = RequestWindow(limit: 3, seconds: 60)
        #expect([0.0, 1, 2].map { window.book(at: $0) } == [0, 0, 0])
        #expect(window.book(at: 10) == 50, "the fourth waits until the first is a minute old")
        #expect(window.book(at: 10) == 51, "the fifth, booked behind it, one second more")
        #expect(window.book(at: 200) == 0, "an old window is forgotten")
    }
}
