import Dispatcher
import Foundation
import JSON
import LiveActivity
import Platform
import Testing

/// Several targets of one activity are several lanes: a phone that hangs holds up neither the other phone on the
/// same backend nor another backend, and each has its own entry in state.json.
@Suite(.timeLimit(.minutes(1)))
struct TargetLanesTests {
    /// A Home Assistant backend whose calls to `notify.mobile_app_slow` hang until released.
    final class Phones: PushBackend, @unchecked Sendable {
        let name = "family"
        let allowsOneActiveJob = false
        let calls = Locked<[String]>([])
        let (deliveries, delivered) = AsyncStream.makeStream(of: String.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            calls.withLock { $0.append("\(request.target) \(kind.rawValue)") }
            delivered.yield("\(request.target) \(kind.rawValue)")
            if request.target == "notify.mobile_app_slow" {
                for await _ in release { break }
            }
            return DeliveryReport(.delivered)
        }
    }

    static func request(_ service: String, _ kind: PushKind, _ message: String) -> BackendRequest {
        .homeAssistant(backend: "family", service: service, fields: ["tag": "washer", "message": .string(message)], kind: kind, dismissAfter: .zero, now: 0)
    }

    @Test func aHangingPhoneDelaysNoOtherTarget() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-lanes-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let phones = Phones()
        let dispatcher = Dispatcher(backends: [phones], stateFile: try DeliveryStateFile(directory: directory))
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        let budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
        func submit(_ service: String, _ event: Dispatcher.Event) async {
            await dispatcher.submit([Dispatcher.Submission(activity: "washer", target: "family/" + service, backend: "family", device: service, budget: budget, event: event)])
        }
        await submit("notify.mobile_app_slow", .start(Self.request("notify.mobile_app_slow", .start, "Washing")))
        // Each of the other phone's pushes once the one before has been delivered (an update still queued when the
        // end comes is dropped: the end says it all).
        var seen: [String] = []
        var deliveries = phones.deliveries.filter { $0.hasPrefix("notify.mobile_app_me") }.makeAsyncIterator()
        await submit("notify.mobile_app_me", .start(Self.request("notify.mobile_app_me", .start, "Washing")))
        seen.append(await deliveries.next() ?? "-")
        await submit("notify.mobile_app_me", .change(Self.request("notify.mobile_app_me", .update, "Rinsing"), urgent: true))
        seen.append(await deliveries.next() ?? "-")
        await submit("notify.mobile_app_me", .end(Self.request("notify.mobile_app_me", .end, "Done")))
        seen.append(await deliveries.next() ?? "-")
        #expect(seen == ["notify.mobile_app_me start", "notify.mobile_app_me update", "notify.mobile_app_me end"])
        #expect(await dispatcher.phase(activity: "washer", target: "family/notify.mobile_app_slow") == .starting, "still waiting for its answer")
        phones.releasing.yield()
        await dispatcher.waitUntilQuiet()
        #expect(await dispatcher.phase(activity: "washer", target: "family/notify.mobile_app_slow") == .running)
        #expect(await dispatcher.phase(activity: "washer", target: "family/notify.mobile_app_me") == .idle)
        #expect(await dispatcher.runningActivities.map { "\($0.activity)@\($0.target)" } == ["washer@family/notify.mobile_app_slow"])
        _ = await dispatcher.flush(deadline: .seconds(1))
        let saved = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/state.json"))))
        #expect(saved["activities"]?.objectValue?.keys.sorted() == ["washer@family/notify.mobile_app_slow"])
    }
}

/// The dispatcher names the activity and target of each budget decision, for the logs.
@Suite(.timeLimit(.minutes(1)))
struct BudgetDecisionTests {
    final class Aivi: PushBackend, @unchecked Sendable {
        let name = "aivi"
        let allowsOneActiveJob = false
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport { DeliveryReport(.delivered) }
    }

    static func request(_ progress: Double) -> BackendRequest {
        .aivi(backend: "aivi", slug: "washer", kind: .update, content: ["template": "generic", "progress": .double(progress)])
    }

    @Test func deduplicatedAndHeldUpdatesAreNamed() async throws {
        let (decisions, told) = AsyncStream.makeStream(of: Dispatcher.Decision.self)
        let dispatcher = Dispatcher(backends: [Aivi()], decision: { told.yield($0) })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        var budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
        budget.minChange = MinChange(progress: 0.1, eta: .zero)
        await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .start(Self.request(0.2)))
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .change(Self.request(0.2), urgent: false))
        await dispatcher.waitUntilQuiet()
        // Held for a quiet of ten minutes: the lane is not quiet, so the test waits for the decisions themselves.
        await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .change(Self.request(0.25), urgent: false))
        var seen: [Dispatcher.Decision] = []
        for await decision in decisions {
            seen.append(decision)
            if seen.count == 2 { break }
        }
        #expect(seen == [
            Dispatcher.Decision(activity: "washer", target: "aivi", what: "deduplicated 1 update (the phone shows it)"),
            Dispatcher.Decision(activity: "washer", target: "aivi", what: "held 1 update (not worth a push)"),
        ])
    }

    /// A lane held by min_interval before one push and again before the next tells the second hold as a repeat (the
    /// daemon logs it at debug, not info); once a push went out that nothing held, the next hold is news again. The
    /// interval is an hour, so every non-urgent change is held whatever the machine's speed; urgent changes go at once
    /// and make the pushes in between.
    @Test func aHoldBeforeEveryPushIsToldAsNewsOnce() async throws {
        let (decisions, told) = AsyncStream.makeStream(of: Dispatcher.Decision.self)
        let dispatcher = Dispatcher(backends: [Aivi()], decision: { told.yield($0) })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        let budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .seconds(3600))
        var progress = 0.1
        func change(urgent: Bool) async {
            progress += 0.1
            await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .change(Self.request(progress), urgent: urgent))
            // An urgent change is pushed before the dispatcher is quiet; a held one leaves it waiting for its time, so
            // the hold's decision is what the test waits for (below), in order.
            if urgent { await dispatcher.waitUntilQuiet() }
        }
        await dispatcher.submit(activity: "washer", backend: "aivi", budget: budget, .start(Self.request(progress)))
        await dispatcher.waitUntilQuiet()
        var holds: [Bool] = []
        var iterator = decisions.makeAsyncIterator()
        func nextHold() async -> Bool? {
            while let decision = await iterator.next() {
                if decision.what == "holding the next update: min_interval since the last push" { return decision.isRepeat }
            }
            return nil
        }
        await change(urgent: false)  // held: news
        holds.append(await nextHold() ?? true)
        await change(urgent: true)  // pushed at once (the hold before it counts)
        await change(urgent: false)  // held again before the next push: a repeat
        holds.append(await nextHold() ?? false)
        await change(urgent: true)
        await change(urgent: true)  // a push nothing held: the lane went quiet
        await change(urgent: false)  // held: news again
        holds.append(await nextHold() ?? true)
        #expect(holds == [false, true, false])
    }
}
