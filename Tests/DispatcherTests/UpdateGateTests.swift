import Platform
import JSON
import LiveActivity
import Testing
@testable import Dispatcher

/// The one decision whether a lane's waiting update may go, as a pure function of the update and the lane's situation.
struct UpdateGateTests {
    typealias Instant = Moment
    let zero = Moment.now
    func at(_ seconds: Double) -> Instant { zero.advanced(by: .milliseconds(Int64(seconds * 1000))) }

    func update(_ progress: Double, urgent: Bool = false) -> Push {
        let request = BackendRequest.aivi(backend: "aivi", slug: "washer", kind: .update,
                                          content: ["template": "progress", "progress": ["style": "simple", "value": .double(progress)]])
        return Push(.update, body: request.bodyBytes, isUrgent: urgent, request: request)
    }

    func situation(_ change: (inout UpdateGate.Situation) -> Void = { _ in }) -> UpdateGate.Situation {
        var budget = UpdateBudget()
        budget.debounce = .seconds(2)
        budget.maxWait = .seconds(10)
        budget.minInterval = .seconds(5)
        var situation = UpdateGate.Situation(budget: budget, relay: .open, renewAt: nil,
                                             shown: ShownActivity(startedAt: at(0), lastPush: at(0)))
        change(&situation)
        return situation
    }

    func pending(_ push: Push) -> PendingUpdate { PendingUpdate(push: push, firstChange: at(10), lastChange: at(10)) }

    @Test func theDebounceWaitsUnnamedAndMinIntervalIsAHold() {
        let waiting = pending(update(0.5))
        #expect(UpdateGate.verdict(for: waiting, first: at(10), last: at(10), in: situation(), at: at(11)) == .hold(nil, until: at(12)))
        let soon = situation { $0.shown.lastPush = at(9) }
        #expect(UpdateGate.verdict(for: waiting, first: at(10), last: at(10), in: soon, at: at(12.5)) == .hold(.minInterval, until: at(14)))
        #expect(UpdateGate.verdict(for: waiting, first: at(10), last: at(10), in: soon, at: at(14)) == .send(update(0.5)))
    }

    @Test func theSettleTheRelayAndTheHourHoldAllButUrgentOnes() {
        let settling = situation { $0.budget.settle = .seconds(30) }
        #expect(UpdateGate.verdict(for: pending(update(0.5)), first: at(10), last: at(10), in: settling, at: at(20)) == .hold(.startSettle, until: at(30)))
        let reserved = situation { $0.relay = .reserved(until: at(100)) }
        #expect(UpdateGate.verdict(for: pending(update(0.5)), first: at(10), last: at(10), in: reserved, at: at(20)) == .hold(.relayBudget, until: at(100)))
        #expect(UpdateGate.verdict(for: pending(update(0.5, urgent: true)), first: at(10), last: at(10), in: reserved, at: at(20)) == .send(update(0.5, urgent: true)))
        let spent = situation { $0.budget.maxPerHour = 2; $0.shown.sentUpdates = RollingWindow([at(1), at(2)]) }
        #expect(UpdateGate.verdict(for: pending(update(0.5)), first: at(10), last: at(10), in: spent, at: at(20)) == .hold(.hourlyBudget, until: at(3601)))
        let renewing = situation { $0.budget.maxPerHour = 2; $0.shown.sentUpdates = RollingWindow([at(1), at(2)]); $0.renewAt = at(600) }
        #expect(UpdateGate.verdict(for: pending(update(0.5)), first: at(10), last: at(10), in: renewing, at: at(20)) == .hold(.hourlyBudget, until: at(600)))
    }

    @Test func aMarkedChangeIsRenderedADuplicateDroppedASmallMoveHeld() {
        let marked = PendingUpdate(needsRender: true, firstChange: at(10), lastChange: at(10))
        #expect(UpdateGate.verdict(for: marked, first: at(10), last: at(10), in: situation(), at: at(20)) == .render)
        let shown = update(0.5)
        let same = situation { $0.shown.digest = DeliveryState.digest(shown.body) }
        #expect(UpdateGate.verdict(for: pending(update(0.5)), first: at(10), last: at(10), in: same, at: at(20)) == .duplicate)
        let measured = situation { $0.shown.measure = PayloadMeasure(shown.request!); $0.budget.minChange = MinChange(progress: 0.05, eta: .seconds(180)) }
        #expect(UpdateGate.verdict(for: pending(update(0.51)), first: at(10), last: at(10), in: measured, at: at(20))
                == .notWorthAPush(until: at(10).advanced(by: UpdateBudget.quiet)))
        #expect(UpdateGate.verdict(for: pending(update(0.6)), first: at(10), last: at(10), in: measured, at: at(20)) == .send(update(0.6)))
    }
}

/// What the lane does around the gate with its waiting update.
struct PendingUpdateLaneTests {
    typealias Instant = Moment
    let zero = Moment.now
    func at(_ seconds: Double) -> Instant { zero.advanced(by: .milliseconds(Int64(seconds * 1000))) }

    func push(_ kind: PushKind, _ progress: Double) -> Push {
        let request = BackendRequest.aivi(backend: "aivi", slug: "washer", kind: kind,
                                          content: ["template": "progress", "progress": ["style": "simple", "value": .double(progress)]])
        return Push(kind, body: request.bodyBytes, isUrgent: kind != .update, request: request)
    }

    /// A start refused for good takes the change marked while it went with it: the lane is quiet, and the next start
    /// (which carries the newest content) is not followed by an update rendered from that stale change. (Before the
    /// waiting update was one value, the marked change stayed behind.)
    @Test func aStartRefusedForGoodTakesTheMarkedChangeWithIt() {
        var lane = ActivityLane()
        lane.start(push(.start, 0.1), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("the start did not go"); return }
        lane.markChanged(at: at(1))
        lane.finished(.rejected(.service("INVALID_CONTENT")), at: at(2))
        #expect(lane.isQuiet)
        lane.start(push(.start, 0.5), at: at(10))
        guard case .send = lane.next(at: at(10)) else { Issue.record("the second start did not go"); return }
        lane.finished(.delivered, at: at(11))
        #expect(lane.next(at: at(100)) == .wait(until: nil))
    }

    /// A change marked while the update it asked for was being rendered may be newer than what the render read: what
    /// was rendered goes, and that change goes after it (it was lost when no other change followed: a flood's last
    /// state stayed off the phone).
    @Test func aChangeWhileItsUpdateIsRenderedIsNotLost() {
        var lane = ActivityLane(budget: UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .seconds(1)))
        lane.start(push(.start, 0.1), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("the start did not go"); return }
        lane.finished(.delivered, at: at(0))
        lane.markChanged(at: at(2))
        #expect(lane.next(at: at(2)) == .render(.update))
        lane.markChanged(at: at(2.001))  // the last change, while the render reads the states before it
        lane.rendered(push(.update, 0.2), at: at(2.002))
        guard case .send(let first) = lane.next(at: at(2.002)) else { Issue.record("the rendered update did not go"); return }
        #expect(first.body == push(.update, 0.2).body)
        lane.finished(.delivered, at: at(2.01))
        // The stale change: rendered again once min_interval allows, from the newest states.
        #expect(lane.next(at: at(2.5)) == .wait(until: at(2.01).advanced(by: .seconds(1))))
        #expect(lane.next(at: at(3.01)) == .render(.update))
        lane.rendered(push(.update, 0.3), at: at(3.02))
        guard case .send(let second) = lane.next(at: at(3.02)) else { Issue.record("the last change did not go"); return }
        #expect(second.body == push(.update, 0.3).body)
        lane.finished(.delivered, at: at(3.03))
        #expect(lane.next(at: at(100)) == .wait(until: nil))
    }

    /// The same for a start whose content is rendered again before it goes.
    @Test func aChangeWhileAStartIsRenderedIsNotLost() {
        var lane = ActivityLane(budget: UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero))
        lane.start(push(.start, 0.1), at: at(0))
        lane.markChanged(at: at(0))
        #expect(lane.next(at: at(0)) == .render(.start))
        lane.markChanged(at: at(0.001))
        lane.rendered(push(.update, 0.2), at: at(0.002))
        guard case .send(let start) = lane.next(at: at(0.002)), start.kind == .start else { Issue.record("the start did not go"); return }
        lane.finished(.delivered, at: at(0.01))
        #expect(lane.next(at: at(0.01)) == .render(.update))
    }
}
