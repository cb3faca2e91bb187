import Dispatcher
import Foundation
import HomeAssistant
import ConnectionTestSupport
import HomeAssistantSimulator
import LiveActivity
import LiveBridge
import Platform
import Synchronization
import Testing
import JSON

/// Home Assistant's own Live Activities: pushes as `notify.mobile_app_…` service calls over the live connection.
@Suite(.timeLimit(.minutes(1)))
struct HomeAssistantPushBackendTests {
    let budget = UpdateBudget(debounce: .milliseconds(50), maxWait: .milliseconds(300), minInterval: .milliseconds(100))
    let fastRetry = RetryPolicy(initial: .milliseconds(20), maximum: .milliseconds(100), lockedWait: .seconds(30))

    @Test func homeAssistantLiveUpdatesGoThroughCallServiceAndEndWithClearNotification() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-dispatch")
        defer { simulator.stop() }
        let connection = try HomeAssistantConnection(configuration: try ConnectionConfiguration(url: simulator.url, token: AccessToken("llat-dispatch")))
        let connectionRun = await connection.started(entityIDs: nil)
        let backend = HomeAssistantPushBackend(name: "phone", connection: connection)
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        let start = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: "notify.mobile_app_phone",
                                   body: ["message": "Washing", "data": ["live_update": true, "tag": "washer", "progress": 40]])
        let end = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: "notify.mobile_app_phone",
                                 body: ["message": "clear_notification", "data": ["tag": "washer"]])
        await dispatcher.submit(activity: "washer", backend: "phone", budget: budget, .start(start))
        await dispatcher.submit(activity: "washer", backend: "phone", budget: budget, .end(end))
        await dispatcher.waitUntilQuiet()
        let calls = simulator.record.serviceCalls
        #expect(calls.map { $0["service"] } == ["mobile_app_phone", "mobile_app_phone"])
        #expect(calls.first?["service_data"]?["data"] == ["live_update": true, "tag": "washer", "progress": 40])
        #expect(calls.last?["service_data"]?["message"] == "clear_notification")

        await simulator.failService("notify.mobile_app_phone", with: HomeAssistantError(code: "service_validation_error", message: "bad"))
        let records = Locked<[Dispatcher.PushRecord]>([])
        let failing = Dispatcher(backends: [backend], retry: fastRetry, onPush: { r in records.withLock { $0.append(r) } })
        let failingRun = Task { await failing.run() }
        defer { failingRun.cancel() }
        await failing.submit(activity: "washer", backend: "phone", budget: budget, .start(start))
        await failing.waitUntilQuiet()
        #expect(records.withLock { $0.map(\.report.outcome) } == [.rejected(.homeAssistant("service_validation_error"))])
        await connectionRun.stop()
    }

    @Test func withoutAConnectionEveryPushIsRefusedAsNotConnected() async {
        let backend = HomeAssistantPushBackend(name: "phone", connection: nil)
        let request = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: "notify.mobile_app_phone",
                                     body: ["message": "Washing", "data": ["tag": "washer"]])
        #expect(await backend.deliver(request, kind: .start).outcome == .rejected(.notConnected))
        let bad = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: "notify", body: ["message": "m"])
        #expect(await backend.deliver(bad, kind: .start).outcome == .rejected(.invalidService))
    }
}

/// A core restart: `notify.mobile_app_*` answers `not_found` until `mobile_app` has set up again. Such a push waits
/// (retried) rather than being dropped; only a service missing while core runs, past the grace, is refused.
@Suite(.timeLimit(.minutes(1)))
struct ServiceNotFoundTests {
    let push = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: "notify.mobile_app_phone",
                              body: ["message": "clear_notification", "data": ["tag": "washer", "dismissal_date": 0]])

    func connected(_ simulator: HomeAssistantSimulator) async throws -> (HomeAssistantConnection, RunningConnection) {
        let connection = try HomeAssistantConnection(configuration: try ConnectionConfiguration(url: simulator.url, token: AccessToken("llat-nf")))
        return (connection, await connection.started(entityIDs: nil))
    }

    @Test func whileCoreStartsANotFoundIsRetried() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-nf")
        defer { simulator.stop() }
        let (connection, connectionRun) = try await connected(simulator)
        await simulator.failService("notify.mobile_app_phone", with: HomeAssistantError(code: "not_found", message: "Service not found."))
        await simulator.setCoreState("STARTING")
        let backend = HomeAssistantPushBackend(name: "phone", connection: connection, missingGrace: .zero)
        #expect(await backend.deliver(push, kind: .end).outcome == .retry(after: .seconds(2)))
        await connectionRun.stop()
    }

    @Test func aServiceListedAgainIsRetriedAndOneMissingWhileCoreRunsIsRefusedAfterTheGrace() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-nf")
        defer { simulator.stop() }
        let (connection, connectionRun) = try await connected(simulator)
        await simulator.failService("notify.mobile_app_phone", with: HomeAssistantError(code: "not_found", message: "Service not found."))
        await simulator.listServices(["notify": ["mobile_app_phone"]])
        let patient = HomeAssistantPushBackend(name: "phone", connection: connection, missingGrace: .zero)
        #expect(await patient.deliver(push, kind: .end).outcome == .retry(after: .seconds(2)), "listed: registering again")
        await simulator.listServices(["notify": ["mobile_app_other"]])
        let graceful = HomeAssistantPushBackend(name: "phone", connection: connection, missingGrace: .seconds(3600))
        #expect(await graceful.deliver(push, kind: .end).outcome == .retry(after: .seconds(2)), "missing, within the grace")
        #expect(await patient.deliver(push, kind: .end).outcome == .rejected(.homeAssistant("not_found")), "missing while core runs, past the grace")
        await connectionRun.stop()
    }
}

/// What a push whose answer was lost does, and the end's dismissal date counted from when it is sent.
@Suite(.timeLimit(.minutes(1)))
struct LostAnswerTests {
    func connected(_ simulator: HomeAssistantSimulator) async throws -> (HomeAssistantConnection, RunningConnection) {
        let connection = try HomeAssistantConnection(configuration: try ConnectionConfiguration(url: simulator.url, token: AccessToken("llat-lost")))
        return (connection, await connection.started(entityIDs: nil))
    }

    func request(_ kind: PushKind) -> BackendRequest {
        .homeAssistant(backend: "phone", service: "notify.mobile_app_phone", fields: ["tag": "washer", "message": "Done"], kind: kind,
                       dismissAfter: .seconds(300), now: 0)
    }

    /// A start or an update twice would be a second activity or a repeat; an end twice is a free plain clear.
    @Test func aStartWhoseAnswerWasLostIsNotSentAgainAnEndIs() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-lost")
        defer { simulator.stop() }
        let (connection, connectionRun) = try await connected(simulator)
        await simulator.failService("notify.mobile_app_phone", with: HomeAssistantError(code: "disconnected", message: "lost"))
        let backend = HomeAssistantPushBackend(name: "phone", connection: connection)
        #expect(await backend.deliver(request(.start), kind: .start) == DeliveryReport(.delivered, code: .disconnectedTakenAsSent))
        #expect(await backend.deliver(request(.update), kind: .update).outcome == .delivered)
        #expect(await backend.deliver(request(.end), kind: .end).outcome == .retry(after: nil))
        await connectionRun.stop()
    }

    @Test func theEndsDismissalDateCountsFromWhenItIsSent() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-lost")
        defer { simulator.stop() }
        let (connection, connectionRun) = try await connected(simulator)
        let backend = HomeAssistantPushBackend(name: "phone", connection: connection)
        let now = Date().timeIntervalSince1970
        #expect(await backend.deliver(request(.end), kind: .end).outcome == .delivered)
        let sent = try #require(simulator.record.serviceCalls.last?["service_data"]?["data"]?["dismissal_date"]?.intValue)
        #expect(abs(Double(sent) - (now + 300)) < 5, "rendered at 0, sent now: \(sent)")
        await connectionRun.stop()
    }
}
