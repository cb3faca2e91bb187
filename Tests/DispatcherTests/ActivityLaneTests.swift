import Platform
import Dispatcher
import Testing
import LiveActivity

/// The lifecycle and budget arithmetic under a test clock: minutes of time in microseconds, no sleeping.
struct ActivityLaneTests {
    typealias Instant = Moment
    let zero = Moment.now

    func at(_ seconds: Double) -> Instant { zero.advanced(by: .milliseconds(Int64(seconds * 1000))) }
    func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A sent push: when (seconds after zero), what kind and body.
    struct Sent: Equatable, CustomStringConvertible {
        let time: Double
        let kind: PushKind
        let body: String
        var description: String { "\(time)s \(kind.rawValue) \(body)" }
    }

    enum Event {
        case start(String), change(String, urgent: Bool), end(String)
        /// The payload is now this, marked changed, not rendered: the lane asks for it (`.render`) when it is due.
        case mark(String, urgent: Bool)
    }

    /// How many payloads the last replay rendered for `.render`.
    final class RenderCount { var value = 0 }

    /// Replays `events` on a lane whose backend answers every push with `answer` (default: delivered at once),
    /// stepping the clock to each event and each wake-up the lane asks for, until `until`.
    func replay(_ events: [(Double, Event)], lane: inout ActivityLane, until: Double = 600, renders: RenderCount = RenderCount(),
                answer: (Push, Double) -> PushOutcome = { _, _ in .delivered }) -> [Sent] {
        var sent: [Sent] = []
        var current = ""
        var pending = events.sorted { $0.0 < $1.0 }
        var now = 0.0
        var wake: Double? = nil
        while now <= until {
            while let first = pending.first, first.0 <= now {
                pending.removeFirst()
                switch first.1 {
                case .start(let b): lane.start(body(b), at: at(first.0))
                case .change(let b, let urgent): lane.change(body(b), urgent: urgent, at: at(first.0))
                case .end(let b): lane.end(body(b), at: at(first.0))
                case .mark(let b, let urgent):
                    current = b
                    lane.markChanged(urgent: urgent, at: at(first.0))
                }
            }
            wake = nil
            while true {
                switch lane.next(at: at(now)) {
                case .send(let push):
                    sent.append(Sent(time: now, kind: push.kind, body: String(decoding: push.body, as: UTF8.self)))
                    lane.finished(answer(push, now), at: at(now))
                    continue
                case .render(let kind):
                    renders.value += 1
                    lane.rendered(Push(kind, body: body(current), isUrgent: true), at: at(now))
                    continue
                case .renew:
                    lane.renewing((end: Push(.end, body: body("renew-end"), isUrgent: true), start: Push(.start, body: body(current), isUrgent: true)),
                                  at: at(now))
                    continue
                case .wait(let until):
                    wake = until.map { zero.duration(to: $0) }.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
                }
                break
            }
            let nextEvent = pending.first?.0
            guard let next = [nextEvent, wake].compactMap({ $0 }).min() else { break }
            now = max(next, now + 0.000_001)
        }
        return sent
    }

    @Test func aThousandMarkedChangesInOneDebounceWindowRenderOnceAndSendTheLatest() {
        var lane = ActivityLane(budget: UpdateBudget(debounce: .seconds(2), maxWait: .seconds(10), minInterval: .seconds(1)))
        let renders = RenderCount()
        var events: [(Double, Event)] = [(0, .start("s"))]
        for n in 1...1000 { events.append((10 + Double(n) * 0.001, .mark("c\(n)", urgent: false))) }
        let sent = replay(events, lane: &lane, renders: renders)
        #expect(sent == [Sent(time: 0, kind: .start, body: "s"), Sent(time: 13, kind: .update, body: "c1000")])
        #expect(renders.value == 1)
        #expect(lane.counters.debounced == 999)
    }

    @Test func anEndIsNeverLostToAPendingRender() {
        var lane = ActivityLane(budget: UpdateBudget(debounce: .seconds(2), maxWait: .seconds(10), minInterval: .seconds(1)))
        let renders = RenderCount()
        let sent = replay([(0, .start("s")), (10, .mark("a", urgent: false)), (10.5, .end("e")), (11, .mark("late", urgent: false))],
                          lane: &lane, renders: renders)
        #expect(sent == [Sent(time: 0, kind: .start, body: "s"), Sent(time: 10.5, kind: .end, body: "e")])
        #expect(renders.value == 0)
    }

    @Test func anUrgentMarkSkipsTheBudgetAndAStartWaitingToRetryIsRenderedAgain() {
        var lane = ActivityLane(budget: UpdateBudget(debounce: .seconds(2), maxWait: .seconds(10), minInterval: .seconds(1)))
        let renders = RenderCount()
        let urgent = replay([(0, .start("s")), (10, .mark("failed", urgent: true))], lane: &lane, renders: renders)
        #expect(urgent == [Sent(time: 0, kind: .start, body: "s"), Sent(time: 10, kind: .update, body: "failed")])

        var retrying = ActivityLane(budget: UpdateBudget(), retry: RetryPolicy(initial: .seconds(1), maximum: .seconds(1)))
        let again = RenderCount()
        var first = true
        let sent = replay([(0, .start("s")), (0.5, .mark("newer", urgent: false))], lane: &retrying, renders: again) { push, _ in
            defer { first = false }
            return first ? .retry(after: nil) : .delivered
        }
        #expect(sent.map(\.body) == ["s", "newer"])
        #expect(sent.map(\.kind) == [.start, .start])
        #expect(again.value == 1)
    }

    @Test func sixtyChangesInThirtySecondsGiveStartTwoUpdatesAndEnd() {
        var lane = ActivityLane()
        var events: [(Double, Event)] = [(0, .start("s"))]
        for n in 1...60 { events.append((Double(n) * 0.5, .change("c\(n)", urgent: false))) }
        events.append((40, .end("e")))
        let sent = replay(events, lane: &lane)
        // No 2 s of quiet while changes come every 0.5 s: max_wait (15 s after the first unsent change) decides.
        #expect(sent == [Sent(time: 0, kind: .start, body: "s"), Sent(time: 15.5, kind: .update, body: "c31"),
                         Sent(time: 31, kind: .update, body: "c60"), Sent(time: 40, kind: .end, body: "e")])
        #expect(lane.counters.debounced == 58)
        #expect(lane.phase == .idle)
    }

    @Test func anUpdateWaitsForTwoSecondsOfQuiet() {
        var lane = ActivityLane()
        let sent = replay([(0, .start("s")), (10, .change("a", urgent: false)), (11, .change("b", urgent: false))], lane: &lane)
        #expect(sent.map(\.description) == ["0.0s start s", "13.0s update b"])
    }

    @Test func minIntervalSpacesUpdates() {
        var lane = ActivityLane()
        let sent = replay([(0, .start("s")), (1, .change("a", urgent: false)), (3.5, .change("b", urgent: false))], lane: &lane)
        // "a" is quiet at 3 s but min_interval holds it to 5 s; "b" (3.5) replaces it and is quiet at 5.5 s.
        #expect(sent.map(\.description) == ["0.0s start s", "5.5s update b"])
        var spaced = ActivityLane()
        let second = replay([(0, .start("s")), (10, .change("a", urgent: false)), (12.5, .change("b", urgent: false))], lane: &spaced)
        #expect(second.map(\.description) == ["0.0s start s", "12.0s update a", "17.0s update b"])
    }

    @Test func anUpdateEqualToWhatThePhoneShowsIsNotSent() {
        var lane = ActivityLane()
        let sent = replay([(0, .start("s")), (10, .change("a", urgent: false)), (20, .change("a", urgent: false)),
                           (30, .change("b", urgent: false)), (30.5, .change("s2", urgent: false)), (31, .change("a", urgent: false))], lane: &lane)
        #expect(sent.map(\.description) == ["0.0s start s", "12.0s update a"])
        #expect(lane.counters.deduplicated == 2)
    }

    @Test func startEndAndUrgentChangesSkipTheBudget() {
        var lane = ActivityLane()
        let sent = replay([(0, .start("s")), (1, .change("failed", urgent: true)), (1.5, .end("e"))], lane: &lane)
        #expect(sent.map(\.description) == ["0.0s start s", "1.0s update failed", "1.5s end e"])
    }

    @Test func anEndReplacesAQueuedUpdateAndIsNeverReplaced() {
        var lane = ActivityLane()
        let sent = replay([(0, .start("s")), (1, .change("a", urgent: false)), (1.5, .end("e1")), (1.6, .end("e2")), (1.7, .change("late", urgent: false))],
                          lane: &lane)
        #expect(sent.map(\.description) == ["0.0s start s", "1.5s end e1"])
    }

    @Test func whileAPushIsInFlightOnlyTheNewestUpdateWaits() {
        var lane = ActivityLane()
        lane.start(body("s"), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return }
        lane.change(body("a"), at: at(0.1))
        lane.change(body("b"), at: at(0.2))
        #expect(lane.next(at: at(0.3)) == .wait(until: nil))
        lane.finished(.delivered, at: at(0.4))
        #expect(lane.next(at: at(0.5)) == .wait(until: at(5.4)))
        #expect(lane.next(at: at(5.4)) == .send(Push(.update, body: body("b"))))
    }

    @Test func aStartThatNeverReachedThePhoneNeedsNoEnd() {
        var lane = ActivityLane()
        lane.start(body("s"), at: at(0))
        lane.end(body("e"), at: at(0))
        #expect(lane.next(at: at(0)) == .wait(until: nil))
        #expect(lane.isQuiet)
    }

    @Test func alreadyRunningOnStartContinuesAsAnUpdate() {
        var lane = ActivityLane()
        let sent = replay([(0, .start("s"))], lane: &lane) { push, _ in push.kind == .start ? .alreadyRunning : .delivered }
        #expect(sent.map(\.description) == ["0.0s start s", "0.0s update s"])
        #expect(lane.phase == .running)
        #expect(lane.delivered == DeliveryState.digest(body("s")))
    }

    @Test func serverErrorsAreRetriedWithBackOffAndRetryAfterIsHonoured() {
        var lane = ActivityLane(retry: RetryPolicy(initial: .seconds(1), maximum: .seconds(60)))
        var failures = 0
        let sent = replay([(0, .start("s")), (10, .change("a", urgent: false))], lane: &lane) { push, _ in
            guard push.kind == .update, failures < 3 else { return .delivered }
            failures += 1
            return failures == 3 ? .retry(after: .seconds(30)) : .retry(after: nil)
        }
        // Jitter fixed at 0.5: 1 s (0.75 s floored at `initial`), then 1.5 s, then the server's 30 s.
        #expect(sent.map(\.description) == ["0.0s start s", "12.0s update a", "13.0s update a", "14.5s update a", "44.5s update a"])
        #expect(lane.counters.retries == 3)
    }

    @Test func anEndIsDeliveredAfterATwoMinuteOutage() {
        var lane = ActivityLane(retry: RetryPolicy(initial: .seconds(1), maximum: .seconds(30)))
        let sent = replay([(0, .start("s")), (5, .end("e"))], lane: &lane) { push, now in
            push.kind == .end && now < 125 ? .retry(after: nil) : .delivered
        }
        #expect(sent.first?.description == "0.0s start s")
        #expect(sent.last?.kind == .end)
        #expect(sent.last!.time >= 125 && sent.last!.time <= 125 + 30)
        #expect(sent.dropFirst().allSatisfy { $0.kind == .end })
        #expect(lane.phase == .idle)
    }

    @Test func aRejectedUpdateIsDroppedAndTheNextOneStillGoes() {
        var lane = ActivityLane()
        var rejectedOnce = false
        let sent = replay([(0, .start("s")), (10, .change("bad", urgent: false)), (20, .change("good", urgent: false))], lane: &lane) { push, _ in
            if push.kind == .update && !rejectedOnce { rejectedOnce = true; return .rejected(DeliveryCode.service("INVALID_JOB_ID")) }
            return .delivered
        }
        #expect(sent.map(\.description) == ["0.0s start s", "12.0s update bad", "22.0s update good"])
        #expect(lane.counters.dropped == 1)
    }

    @Test func aLockedStartWaitsUntilReleased() {
        var lane = ActivityLane(retry: RetryPolicy(lockedWait: .seconds(300)))
        lane.start(body("s"), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return }
        lane.finished(.locked(for: nil), at: at(0))
        #expect(lane.next(at: at(1)) == .wait(until: at(300)))
        lane.retryNow()
        #expect(lane.next(at: at(2)) == .send(Push(.start, body: body("s"), isUrgent: true)))
    }

    /// Island Pulse's lock says when it lifts: the start is tried then, not after the long back-off.
    @Test func aLockedStartWaitsForTheLocksExpiry() {
        var lane = ActivityLane(retry: RetryPolicy(lockedWait: .seconds(300)))
        lane.start(body("s"), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return }
        lane.finished(.locked(for: .seconds(42)), at: at(0))
        #expect(lane.waitsForAPlace)
        #expect(lane.next(at: at(1)) == .wait(until: at(42)))
    }

    @Test func aResumedLaneContinuesWithUpdatesNeverASecondStart() {
        var lane = ActivityLane(resuming: true, deliveredDigest: DeliveryState.digest(body("before crash")))
        let sent = replay([(0, .change("after", urgent: false)), (10, .end("e"))], lane: &lane)
        #expect(sent.map(\.description) == ["2.0s update after", "10.0s end e"])
    }
}

/// The lane's lifecycle told with bare bodies, as these tests write them.
extension ActivityLane {
    mutating func start(_ body: [UInt8], at now: Instant) { start(Push(.start, body: body, isUrgent: true), at: now) }
    mutating func change(_ body: [UInt8], urgent: Bool = false, at now: Instant) { change(Push(.update, body: body, isUrgent: urgent), at: now) }
    mutating func end(_ body: [UInt8], at now: Instant) { end(Push(.end, body: body, isUrgent: true), at: now) }
}
