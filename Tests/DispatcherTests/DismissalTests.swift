import Dispatcher
import Foundation
import JSON
import LiveActivity
import Platform
import Testing

/// A two-phase end (PushWard's `ended` after its completion frame; here with a service call's shapes): the last
/// content shown, the dismissal `dismiss_after` later, cancelled by a new start, and kept in state.json across a
/// restart. Home Assistant's own end is one push since core 2026.7 (`LiveUpdateSchema.endData`) and leaves none.
@Suite(.timeLimit(.minutes(1)))
struct DismissalTests {
    let zero = Moment.now
    func at(_ seconds: Int64) -> Moment { zero.advanced(by: .seconds(seconds)) }

    static func push(_ kind: PushKind, message: String, dismissAfter: Duration = .seconds(300)) -> Push {
        let target = "notify.mobile_app_phone"
        let clear: JSONValue = ["message": "clear_notification", "data": ["tag": "washer"]]
        let shown = LiveUpdateSchema.serviceData(["tag": "washer", "message": .string(message)])
        var request = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: target,
                                     body: kind == .end && dismissAfter == .zero ? clear : shown)
        if kind == .end, dismissAfter > .zero { request = request.dismissed(by: clear, at: target, after: dismissAfter) }
        return Push(kind, body: request.bodyBytes, isUrgent: true, request: request)
    }

    /// The lane with its start delivered at 0 and the end with final content "Done" delivered at 10.
    func ended() -> ActivityLane {
        var lane = ActivityLane()
        lane.start(Self.push(.start, message: "Washing"), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return lane }
        lane.finished(.delivered, at: at(0))
        lane.end(Self.push(.end, message: "Done"), at: at(10))
        guard case .send(let final) = lane.next(at: at(10)) else { Issue.record("no end"); return lane }
        #expect(final.request?.body["message"] == "Done" && final.request?.body["data"]?["live_update"] == true)
        lane.finished(.delivered, at: at(10))
        return lane
    }

    @Test func theFinalContentStaysUntilDismissAfterThenIsCleared() {
        var lane = ended()
        #expect(lane.phase == .dismissing)
        #expect(lane.next(at: at(11)) == .wait(until: at(310)))
        guard case .send(let clear) = lane.next(at: at(310)) else { Issue.record("no clear at 310 s"); return }
        #expect(clear.kind == .end && clear.request?.body == ["message": "clear_notification", "data": ["tag": "washer"]])
        #expect(clear.request?.target == "notify.mobile_app_phone")
        lane.finished(.delivered, at: at(310))
        #expect(lane.phase == .idle && lane.dismissal == nil)
        #expect(lane.next(at: at(1000)) == .wait(until: nil))
    }

    /// The user swipes the final content away: nothing is left to clear.
    @Test func aSwipeOfTheFinalContentCancelsTheClear() {
        var lane = ended()
        lane.dismissedByUser()
        #expect(lane.phase == .idle && lane.dismissal == nil)
        #expect(lane.next(at: at(400)) == .wait(until: nil))
    }

    /// A swipe while a push is on its way (e2e: the dismissal event came while an update's call was in flight, and
    /// the end still went): whatever that push's answer, and whenever it comes — before the end, after it, after the
    /// next start — nothing more goes until the next start, which goes at once (no back-off left over).
    @Test(arguments: [PushOutcome.delivered, .alreadyRunning, .retry(after: nil), .locked(for: nil), .rejected(.service("bad_request"))],
          [PushKind.start, .update])
    func aSwipeWhileAPushIsOnItsWayStaysASwipe(outcome: PushOutcome, inFlight: PushKind) {
        for answered in ["at once", "after the end", "after the next start"] {
            var lane = ActivityLane()
            lane.start(Self.push(.start, message: "Washing"), at: at(0))
            guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return }
            if inFlight == .update {
                lane.finished(.delivered, at: at(0))
                lane.change(Self.push(.update, message: "Rinsing"), at: at(5))
                guard case .send(let update) = lane.next(at: at(5)), update.kind == .update else { Issue.record("no update"); return }
            }
            lane.dismissedByUser()
            if answered == "at once" {
                lane.finished(outcome, at: at(6))
                #expect(lane.phase == .dismissed && lane.isQuiet, "\(answered)")
                #expect(lane.next(at: at(7)) == .wait(until: nil), "\(answered)")
                lane.change(Self.push(.update, message: "Spinning"), at: at(8))
            }
            lane.end(Self.push(.end, message: "Done"), at: at(10))
            if answered == "after the end" { lane.finished(outcome, at: at(11)) }
            #expect(lane.next(at: at(12)) == .wait(until: nil), "nothing after the swipe, \(answered)")
            #expect(lane.phase == .idle, "\(answered)")
            lane.start(Self.push(.start, message: "Again"), at: at(20))
            if answered == "after the next start" { lane.finished(outcome, at: at(21)) }
            guard case .send(let start) = lane.next(at: at(21)) else { Issue.record("no next start, \(answered)"); continue }
            #expect(start.kind == .start && start.request?.body["message"] == "Again", "\(answered)")
            lane.finished(.delivered, at: at(22))
            #expect(lane.phase == .running && lane.isQuiet, "\(answered)")
        }
    }

    @Test func aNewStartBeforeTheClearCancelsIt() {
        var lane = ended()
        lane.start(Self.push(.start, message: "Washing again"), at: at(60))
        #expect(lane.dismissal == nil)
        guard case .send(let start) = lane.next(at: at(60)) else { Issue.record("no start"); return }
        #expect(start.kind == .start && start.request?.body["message"] == "Washing again")
        lane.finished(.delivered, at: at(60))
        #expect(lane.phase == .running)
        #expect(lane.next(at: at(400)) == .wait(until: nil), "no clear of the new activity")
    }

    @Test func aClearThatFailsIsRetriedAndDismissAfterZeroClearsAtOnce() {
        var lane = ended()
        guard case .send = lane.next(at: at(310)) else { Issue.record("no clear"); return }
        lane.finished(.retry(after: .seconds(5)), at: at(310))
        guard case .send(let again) = lane.next(at: at(315)) else { Issue.record("the clear was not retried"); return }
        #expect(again.request?.body["message"] == "clear_notification")

        let atOnce = Self.push(.end, message: "Done", dismissAfter: .zero)
        #expect(atOnce.request?.dismissal == nil && atOnce.request?.body == ["message": "clear_notification", "data": ["tag": "washer"]])
    }

    /// A recording Home Assistant backend; `deliveries` yields the number of calls after each one.
    final class Phone: PushBackend, @unchecked Sendable {
        let name = "phone"
        let allowsOneActiveJob = false
        let calls = Locked<[JSONValue]>([])
        let (deliveries, delivered) = AsyncStream.makeStream(of: Int.self)
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            let count = calls.withLock { $0.append(request.body); return $0.count }
            delivered.yield(count)
            return DeliveryReport(.delivered)
        }
    }

    @Test func aPendingClearIsSavedAndSentAfterARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-dismiss-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let phone = Phone()
        do {
            let first = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: directory))
            let firstRun = Task { await first.run() }
            defer { firstRun.cancel() }
            let start = Self.push(.start, message: "Washing").request!, end = Self.push(.end, message: "Done", dismissAfter: .seconds(3600)).request!
            await first.submit(activity: "washer", backend: "phone", budget: UpdateBudget(), .start(start))
            await first.waitUntilQuiet()
            await first.submit(activity: "washer", backend: "phone", budget: UpdateBudget(), .end(end))
            await first.waitUntilQuiet()
            #expect(await first.phase(activity: "washer", target: "phone") == .dismissing)
            #expect(await first.runningActivities.isEmpty, "ended: the engine must not end it again")
        }
        let path = directory + "/state.json"
        let saved = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let dismiss = saved["activities"]?["washer@phone"]?["dismiss"]
        #expect(dismiss?["body"] == ["message": "clear_notification", "data": ["tag": "washer"]])
        #expect(abs((dismiss?["at"]?.doubleValue ?? 0) - (Date().timeIntervalSince1970 + 3600)) < 60, "an hour from now, in epoch seconds")
        #expect(phone.calls.withLock { $0.map { $0["message"] } } == ["Washing", "Done"], "the first process stopped before the clear")
        // LiveBridge was down past the clear's time: the next start sends it at once.
        let overdue = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: "\"at\":\(dismiss!["at"]!.jsonText)", with: "\"at\":\(Date().timeIntervalSince1970 - 1)")
        try overdue.write(toFile: path, atomically: true, encoding: .utf8)

        let restarted = Dispatcher(backends: [phone], stateFile: try DeliveryStateFile(directory: directory))
        let restartedRun = Task { await restarted.run() }
        defer { restartedRun.cancel() }
        await restarted.resume()
        for await count in phone.deliveries where count == 3 { break }
        #expect(phone.calls.withLock { $0.last?["message"] } == "clear_notification")
        // The answer is taken in after deliver returns: wait for it before looking at the phase.
        await restarted.waitUntilQuiet()
        #expect(await restarted.phase(activity: "washer", target: "phone") == .idle)
        _ = await restarted.flush(deadline: .seconds(1))
        let after = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/state.json"))))
        #expect(after["activities"]?["washer@phone"] == nil, "nothing left to remember")
    }
}
