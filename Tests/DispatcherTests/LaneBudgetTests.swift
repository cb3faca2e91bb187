@testable import Dispatcher
import JSON
import LiveActivity
import Testing
import Platform

/// The budget beyond timing, under a test clock: settle after a start, the hourly cap and what matters when it is
/// tight, min_change, renewal before eight hours, a swipe-away, the device's relay. Hours in microseconds.
struct LaneBudgetTests {
    typealias Instant = Moment
    let zero = Moment.now
    func at(_ seconds: Double) -> Instant { zero.advanced(by: .milliseconds(Int64(seconds * 1000))) }

    /// What an Aivi progress activity shows: a status, a bar, and a finish time the phone counts down to.
    struct Shown: Equatable {
        var state = "Washing"
        var progress = 0.0
        var eta: Double? = nil
    }

    static func push(_ kind: PushKind, _ shown: Shown) -> Push {
        var content: [String: JSONValue] = [
            "template": "progress", "progress": ["style": "simple", "value": .double(shown.progress)],
            "header_left": ["value": .string(shown.state)],
        ]
        if let eta = shown.eta { content["header_right"] = ["value": .double(eta), "formatter": "time_until"] }
        let request = BackendRequest.aivi(backend: "aivi", slug: "washer", kind: kind, content: .object(content))
        return Push(kind, body: request.bodyBytes, isUrgent: kind != .update, request: request)
    }

    enum Event {
        case start(Shown), mark(Shown), end, swipedAway, relay(ActivityLane.RelayAllowance)
    }

    /// "12s update Washing 0.4" per push sent (times in seconds after zero).
    func replay(_ events: [(Double, Event)], lane: inout ActivityLane, until: Double) -> [String] {
        var sent: [String] = []
        var pending = events.sorted { $0.0 < $1.0 }
        var current = Shown()
        var now = 0.0
        while now <= until {
            while let first = pending.first, first.0 <= now {
                pending.removeFirst()
                switch first.1 {
                case .start(let shown): current = shown; lane.start(Self.push(.start, shown), at: at(first.0))
                case .mark(let shown): current = shown; lane.markChanged(at: at(first.0))
                case .end: lane.end(Self.push(.end, Shown(state: "Done", progress: 1)), at: at(first.0))
                case .swipedAway: lane.dismissedByUser()
                case .relay(let allowance): lane.relay = allowance
                }
            }
            var wake: Double?
            loop: while true {
                switch lane.next(at: at(now)) {
                case .send(let push):
                    let content = push.request?.body["content"]
                    let state = content?["header_left"]?["value"]?.stringValue ?? "-"
                    let progress = content?["progress"]?["value"]?.doubleValue ?? -1
                    sent.append("\(Int(now))s \(push.kind.rawValue) \(state) \(progress)")
                    lane.finished(.delivered, at: at(now))
                case .render(let kind):
                    lane.rendered(Self.push(kind, current), at: at(now))
                case .renew:
                    lane.renewing((end: Self.push(.end, current), start: Self.push(.start, current)), at: at(now))
                case .wait(let until):
                    wake = until.map { (zero.duration(to: $0)).secondsValue }
                    break loop
                }
            }
            guard let next = [pending.first?.0, wake].compactMap({ $0 }).min() else { break }
            now = max(next, now + 0.001)
        }
        return sent
    }

    func budget(_ change: (inout UpdateBudget) -> Void) -> UpdateBudget {
        var budget = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
        change(&budget)
        return budget
    }

    @Test func updatesWaitForTheSettleAfterAStart() {
        var lane = ActivityLane(budget: budget { $0.settle = .seconds(10) })
        let sent = replay([(0, .start(Shown())), (1, .mark(Shown(progress: 0.1))), (2, .mark(Shown(progress: 0.2)))], lane: &lane, until: 60)
        #expect(sent == ["0s start Washing 0.0", "10s update Washing 0.2"], "one update, the newest, when the settle is over")
    }

    /// An end right after a start waits for the settle as well: before it, Home Assistant could not end the activity.
    @Test func anEndRightAfterAStartWaitsForTheSettle() {
        var lane = ActivityLane(budget: budget { $0.settle = .seconds(10) })
        let sent = replay([(0, .start(Shown())), (1, .mark(Shown(progress: 0.1))), (2, .end)], lane: &lane, until: 60)
        #expect(sent == ["0s start Washing 0.0", "10s end Done 1.0"])
    }

    /// Fifteen an hour: the sixteenth change of the hour waits until the first update is an hour old.
    @Test func theHourlyCapHoldsUpdatesUntilAnHourHasPassed() {
        var lane = ActivityLane(budget: budget { $0.maxPerHour = 3; $0.minChange = MinChange(progress: 0, eta: .zero) })
        var events: [(Double, Event)] = [(0, .start(Shown()))]
        for n in 1...5 { events.append((Double(n) * 60, .mark(Shown(state: "Step \(n)")))) }
        let sent = replay(events, lane: &lane, until: 4000)
        #expect(sent == ["0s start Washing 0.0", "60s update Step 1 0.0", "120s update Step 2 0.0", "180s update Step 3 0.0",
                         "3660s update Step 5 0.0"])
        #expect(lane.updatesLeft(at: at(3700)) == 0)
        #expect(lane.updatesLeft(at: at(3730)) == 1, "the update of 120 s is an hour old")
    }

    /// With the budget tight, a small move of the bar waits; a status change goes at once; the held one goes as the
    /// last state after ten quiet minutes.
    @Test func aTightBudgetSendsWhatMatters() {
        var lane = ActivityLane(budget: budget { $0.maxPerHour = 3 })
        let sent = replay([
            (0, .start(Shown())), (60, .mark(Shown(progress: 0.01))), (120, .mark(Shown(progress: 0.02))),
            (180, .mark(Shown(progress: 0.03))), (240, .mark(Shown(state: "Rinsing", progress: 0.04))),
        ], lane: &lane, until: 1000)
        #expect(sent == ["0s start Washing 0.0", "60s update Washing 0.01", "120s update Washing 0.02",
                         "240s update Rinsing 0.04"], "0.03 is one point after 0.02 with one update left: held, then replaced")
        #expect(lane.counters.held == 1)
        var quiet = ActivityLane(budget: budget { $0.maxPerHour = 3 })
        let last = replay([(0, .start(Shown())), (60, .mark(Shown(progress: 0.01))), (120, .mark(Shown(progress: 0.02))),
                           (180, .mark(Shown(progress: 0.03)))], lane: &quiet, until: 2000)
        #expect(last.last == "780s update Washing 0.03", "the last state goes after ten quiet minutes")
    }

    /// Why the next update waits is known and counted once per change of reason: the hourly budget spent, a small
    /// move under the tight budget; nothing once it went.
    @Test func holdsAreCountedByReason() {
        var lane = ActivityLane(budget: budget { $0.maxPerHour = 2; $0.minChange = MinChange(progress: 0, eta: .zero) })
        _ = replay([
            (0, .start(Shown())), (60, .mark(Shown(state: "a", progress: 0.2))), (120, .mark(Shown(state: "b", progress: 0.4))),
            (180, .mark(Shown(state: "c", progress: 0.6))), (190, .mark(Shown(state: "d", progress: 0.7))),
        ], lane: &lane, until: 400)
        #expect(lane.counters.holds[.hourlyBudget] == 1, "\(lane.counters.holds)")
        #expect(lane.hold == .hourlyBudget, "still held at 400 s: the hour's two updates went at 60 and 120 s")
        // Once the hour has passed the held update goes, and nothing is held any more.
        var later = ActivityLane(budget: budget { $0.maxPerHour = 2; $0.minChange = MinChange(progress: 0, eta: .zero) })
        let sent = replay([
            (0, .start(Shown())), (60, .mark(Shown(state: "a", progress: 0.2))), (120, .mark(Shown(state: "b", progress: 0.4))),
            (180, .mark(Shown(state: "c", progress: 0.6))),
        ], lane: &later, until: 4000)
        #expect(sent.last == "3660s update c 0.6", "\(sent)")
        #expect(later.hold == nil && later.counters.holds[.hourlyBudget] == 1)
    }

    @Test func minChangeHoldsSmallMovesOfTheBarAndOfTheFinishTime() {
        var lane = ActivityLane(budget: budget { $0.minChange = MinChange(progress: 0.05, eta: .seconds(180)) })
        let sent = replay([
            (0, .start(Shown(eta: 3600))),
            (10, .mark(Shown(progress: 0.02, eta: 3600))), (20, .mark(Shown(progress: 0.04, eta: 3660))),
            (30, .mark(Shown(progress: 0.05, eta: 3660))),
            (40, .mark(Shown(progress: 0.06, eta: 3720))), (50, .mark(Shown(progress: 0.07, eta: 3900))),
        ], lane: &lane, until: 100)
        #expect(sent == ["0s start Washing 0.0", "30s update Washing 0.05", "50s update Washing 0.07"],
                "0.05 is five points after 0.0; 3900 is four minutes after the 3660 shown")
    }

    /// A nine-hour activity is renewed once, ten minutes before eight hours, with the same content.
    @Test func aNineHourActivityRenewsOnce() {
        var lane = ActivityLane(budget: budget { $0.renewAfter = UpdateBudget.defaultRenewAfter })
        let sent = replay([(0, .start(Shown())), (3600, .mark(Shown(progress: 0.1))), (9 * 3600, .end)], lane: &lane, until: 10 * 3600)
        #expect(sent == ["0s start Washing 0.0", "3600s update Washing 0.1", "28200s end Washing 0.1", "28200s start Washing 0.1",
                         "32400s end Done 1.0"])
        #expect(lane.counters.renewals == 1)
    }

    /// The activity ends while its renewal waits to go: the real end goes in its place and nothing starts again.
    @Test func anEndWhileARenewalIsQueuedTakesItsPlace() {
        var lane = ActivityLane(budget: budget { $0.renewAfter = .seconds(100) })
        lane.start(Self.push(.start, Shown()), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return }
        lane.finished(.delivered, at: at(0))
        #expect(lane.next(at: at(50)) == .wait(until: at(100)))
        #expect(lane.next(at: at(100)) == .renew)
        lane.renewing((end: Self.push(.end, Shown()), start: Self.push(.start, Shown())), at: at(100))
        lane.end(Self.push(.end, Shown(state: "Done", progress: 1)), at: at(100))
        guard case .send(let end) = lane.next(at: at(100)) else { Issue.record("no end"); return }
        #expect(end.kind == .end && end.request?.body["content"]?["header_left"]?["value"] == "Done")
        lane.finished(.delivered, at: at(100))
        #expect(lane.next(at: at(200)) == .wait(until: nil))
        #expect(lane.phase == .idle)
    }

    /// The user swipes the activity away while its renewal's end is on its way: the renewal's start does not bring
    /// it back (it was queued behind the end); the lane is dismissed until the next real start, whatever the end's
    /// answer. (Before, the swipe was ignored while ending and the start re-created the activity.)
    @Test(arguments: [PushOutcome.delivered, .retry(after: nil), .rejected(.service("bad_request"))])
    func aSwipeDuringARenewalsEndKeepsItAway(outcome: PushOutcome) {
        var lane = ActivityLane(budget: budget { $0.renewAfter = .seconds(100) })
        lane.start(Self.push(.start, Shown()), at: at(0))
        guard case .send = lane.next(at: at(0)) else { Issue.record("no start"); return }
        lane.finished(.delivered, at: at(0))
        #expect(lane.next(at: at(100)) == .renew)
        lane.renewing((end: Self.push(.end, Shown()), start: Self.push(.start, Shown())), at: at(100))
        guard case .send(let end) = lane.next(at: at(100)), end.kind == .end else { Issue.record("no renewal end"); return }
        lane.dismissedByUser()
        lane.finished(outcome, at: at(101))
        if case .retry = outcome {
            // The end goes again (an end is never dropped); still no start after it.
            guard case .send(let again) = lane.next(at: at(200)), again.kind == .end else { Issue.record("the end is not sent again"); return }
            lane.finished(.delivered, at: at(201))
        }
        #expect(lane.next(at: at(300)) == .wait(until: nil), "no start after the swipe")
        #expect(lane.phase == .dismissed)
        lane.markChanged(at: at(310))
        #expect(lane.next(at: at(320)) == .wait(until: nil), "no update to what was swiped away")
        lane.end(Self.push(.end, Shown(state: "Done", progress: 1)), at: at(330))
        #expect(lane.next(at: at(340)) == .wait(until: nil), "nothing to end either")
        lane.start(Self.push(.start, Shown(state: "Again")), at: at(400))
        guard case .send(let start) = lane.next(at: at(400)) else { Issue.record("no next start"); return }
        #expect(start.kind == .start)
    }

    @Test func aSwipedAwayActivityGetsNothingUntilItsNextStart() {
        var lane = ActivityLane(budget: budget { _ in })
        let sent = replay([(0, .start(Shown())), (10, .swipedAway), (20, .mark(Shown(progress: 0.5))), (30, .end),
                           (40, .start(Shown(state: "Again"))), (50, .mark(Shown(state: "Again", progress: 0.2)))], lane: &lane, until: 100)
        #expect(sent == ["0s start Washing 0.0", "40s start Again 0.0", "50s update Again 0.2"])
    }

    @Test func aRelayRunningLowThinsUpdatesAndItsReserveKeepsStartsAndEnds() {
        var lane = ActivityLane(budget: budget { _ in })
        let sent = replay([
            (0, .start(Shown())), (5, .relay(.thin)), (10, .mark(Shown(progress: 0.01))), (20, .mark(Shown(state: "Rinsing", progress: 0.02))),
            (30, .relay(.reserved(until: at(100)))), (40, .mark(Shown(state: "Spinning", progress: 0.5))), (50, .end),
        ], lane: &lane, until: 200)
        #expect(sent == ["0s start Washing 0.0", "20s update Rinsing 0.02", "50s end Done 1.0"])
    }
}

/// Home Assistant's relay: 500 per phone per UTC day, reset at midnight UTC; thin below 100 left, starts and ends only
/// below 25.
struct RelayBudgetTests {
    /// 2026-11-30 00:00:00 UTC.
    static let midnight = 1_795_996_800.0

    @Test func theDayResetsAtMidnightUTCAndTheThresholdsHold() {
        let day = Self.midnight
        var relay = RelayBudget()
        for n in 0..<400 { relay.record(at: day + Double(n)) }
        #expect(relay.remaining(at: day + 400) == 100)
        #expect(relay.allowance(at: day + 400) == (thin: false, reservedUntil: nil))
        relay.record(at: day + 401)
        #expect(relay.allowance(at: day + 401) == (thin: true, reservedUntil: nil))
        for n in 0..<75 { relay.record(at: day + 500 + Double(n)) }
        #expect(relay.remaining(at: day + 600) == 24)
        let (thin, until) = relay.allowance(at: day + 600)
        #expect(thin && until == day + RelayBudget.day, "the reserve holds updates back until midnight UTC")
        #expect(relay.remaining(at: day + RelayBudget.day - 1) == 24, "not a rolling window: the count holds all day")
        #expect(relay.remaining(at: day + RelayBudget.day) == 500, "a new UTC day starts afresh")
        relay.prune(day + RelayBudget.day)
        #expect(relay.pushes.isEmpty)
    }
}

/// A lane's hold counts, five integers since session 56: added up across lanes, and named as the metrics name them
/// (only reasons counted at least once, as the dictionary they replaced held).
struct HoldCountsTests {
    @Test func countsAddUpAndAreNamedByTheirRulesFileNames() {
        var a = ActivityLane.Counters(), b = ActivityLane.Counters()
        a.holds[.minInterval] = 2
        b.holds[.minInterval] = 3
        b.holds[.notWorthAPush] = 1
        a.add(b)
        #expect(a.holds[.minInterval] == 5 && a.holds[.notWorthAPush] == 1 && a.holds[.startSettle] == 0)
        #expect(a.holds.byName == ["min_interval": 5, "min_change": 1])
        #expect(ActivityLane.HoldCounts().byName.isEmpty)
        #expect(a.holds != b.holds)
    }
}
