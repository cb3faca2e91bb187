import Testing
@testable import Dispatcher

/// The one rolling-window counter behind max_per_hour, a service's request allowance and the relay's day.
struct RollingWindowTests {
    @Test func forgetsBeforeAStartOrThroughACutoffAndCountsEitherSide() {
        var window = RollingWindow<Double>([5, 1, 3, 3])
        #expect(window.times == [1, 3, 3, 5])
        #expect(window.count(after: 3) == 1)
        #expect(window.count(from: 3, before: 5) == 2)
        window.forget(before: 3)
        #expect(window.times == [3, 3, 5])
        window.forget(through: 3)
        #expect(window.times == [5])
    }

    @Test func recordsInOrderAndKeepsItsBound() {
        var window = RollingWindow<Double>()
        window.record(10)
        window.record(4)
        window.record(7)
        #expect(window.times == [4, 7, 10])
        window.record(12, keeping: 2)
        #expect(window.times == [10, 12])
    }

    @Test func blockingIsTheEventWhoseLeavingMakesRoom() {
        var window = RollingWindow<Double>()
        #expect(window.blocking(limit: 2) == nil)
        window.record(1)
        #expect(window.blocking(limit: 2) == nil)
        window.record(2)
        #expect(window.blocking(limit: 2) == 1)
        window.record(3)
        #expect(window.blocking(limit: 2) == 2)
    }

    @Test func aRequestWindowSpreadsABurstOverItsSpan() {
        var requests = RequestWindow(limit: 2, seconds: 60)
        #expect(requests.book(at: 0) == 0)
        #expect(requests.book(at: 0) == 0)
        #expect(requests.book(at: 0) == 60)  // the third waits for the first to leave
        #expect(requests.book(at: 10) == 50)  // the fourth goes with the third, at 60: two in any 60 s
        #expect(requests.book(at: 10) == 110)  // the fifth waits for those at 60 to leave
    }
}
