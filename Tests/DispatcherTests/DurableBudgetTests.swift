import Dispatcher
import Foundation
import JSON
import LiveActivity
import Platform
import Testing

/// What the budgets remember across a restart: the pushes through each device's relay, a swipe-away, the start time
/// a renewal counts from.
@Suite(.timeLimit(.minutes(1)))
struct DurableBudgetTests {
    final class Phone: PushBackend, @unchecked Sendable {
        let name = "phone"
        let allowsOneActiveJob = false
        let calls = Locked<[String]>([])
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            calls.withLock { $0.append("\(kind.rawValue) \(request.body["message"]?.stringValue ?? "")") }
            return DeliveryReport(.delivered)
        }
    }

    static func request(_ kind: PushKind, _ message: String) -> BackendRequest {
        .homeAssistant(backend: "phone", service: "notify.mobile_app_phone", fields: ["tag": "washer", "message": .string(message)], kind: kind,
                       dismissAfter: .zero, now: 0)
    }

    let budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)

    func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-durable-\(UUID().uuidString)").path
    }

    func saved(_ directory: String) throws -> JSONValue {
        try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/state.json"))))
    }

    @Test func pushesThroughTheRelayAreCountedPerDeviceAndSurviveARestart() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let phone = Phone()
        let first = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: folder))
        let firstRun = Task { await first.run() }
        defer { firstRun.cancel() }
        await first.submit(activity: "washer", backend: "phone", budget: budget, .start(Self.request(.start, "Washing")))
        await first.waitUntilQuiet()
        await first.submit(activity: "washer", backend: "phone", budget: budget, .change(Self.request(.update, "Rinsing"), urgent: false))
        await first.waitUntilQuiet()
        #expect(await first.relayRemaining == ["notify.mobile_app_phone": 498])
        #expect(await first.lanes.first?.relayRemaining == 498)
        _ = await first.flush(deadline: .seconds(1))
        #expect(try saved(folder)["relays"]?["notify.mobile_app_phone"]?.arrayValue?.count == 2)
        let restarted = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: folder))
        let restartedRun = Task { await restarted.run() }
        defer { restartedRun.cancel() }
        #expect(await restarted.relayRemaining == ["notify.mobile_app_phone": 498])
    }

    /// 480 pushes in the last day: 20 left, below the reserve of 25. The start goes, updates wait, the end goes.
    @Test func aRelayNearlySpentKeepsItsLastPushesForStartsAndEnds() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Within today's UTC day (the relay's budget is per UTC day): an hour before now crossed midnight when run
        // just after it, and the pushes counted for yesterday.
        let now = Date().timeIntervalSince1970
        let dayStart = (now / 86_400).rounded(.down) * 86_400
        let spent = (0..<480).map { JSONValue.double(dayStart + (now - dayStart) * Double($0) / 480) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONValue.object(["version": 1, "activities": [:], "relays": ["notify.mobile_app_phone": .array(spent)]]).jsonText
            .write(toFile: folder + "/state.json", atomically: true, encoding: .utf8)
        let phone = Phone()
        let dispatcher = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: folder))
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.submit(activity: "washer", backend: "phone", budget: budget, .start(Self.request(.start, "Washing")))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "phone", budget: budget, .change(Self.request(.update, "Rinsing"), urgent: false))
        await dispatcher.submit(activity: "washer", backend: "phone", budget: budget, .end(Self.request(.end, "Done")))
        await dispatcher.waitUntilQuiet()
        #expect(phone.calls.withLock { $0 } == ["start Washing", "end clear_notification"])
        #expect(await dispatcher.relayRemaining == ["notify.mobile_app_phone": 18])
    }

    @Test func aSwipedAwayActivityStaysDismissedAfterARestart() async throws {
        let folder = directory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let phone = Phone()
        let first = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: folder))
        let firstRun = Task { await first.run() }
        defer { firstRun.cancel() }
        await first.submit(activity: "washer", backend: "phone", budget: budget, .start(Self.request(.start, "Washing")))
        await first.waitUntilQuiet()
        await first.dismissedByUser(activity: "washer", target: "phone")
        #expect(await first.phase(activity: "washer", target: "phone") == .dismissed)
        _ = await first.flush(deadline: .seconds(1))
        let entry = try saved(folder)["activities"]?["washer@phone"]
        #expect(entry?["dismissed"] == true && entry?["running"] == true, "still active for the engine: no new start edge after a restart")
        #expect(entry?["started"]?.doubleValue.map { abs($0 - Date().timeIntervalSince1970) < 60 } == true)

        let restarted = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: folder))
        let restartedRun = Task { await restarted.run() }
        defer { restartedRun.cancel() }
        #expect(await restarted.runningActivities.map(\.activity) == ["washer"])
        await restarted.submit(activity: "washer", backend: "phone", budget: budget, .change(Self.request(.update, "Rinsing"), urgent: true))
        await restarted.submit(activity: "washer", backend: "phone", budget: budget, .end(Self.request(.end, "Done")))
        await restarted.waitUntilQuiet()
        #expect(phone.calls.withLock { $0 } == ["start Washing"], "after the swipe: no update, no end")
        await restarted.submit(activity: "washer", backend: "phone", budget: budget, .start(Self.request(.start, "Again")))
        await restarted.waitUntilQuiet()
        #expect(phone.calls.withLock { $0 } == ["start Washing", "start Again"])
    }
}
