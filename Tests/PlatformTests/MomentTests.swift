import Platform
import Testing

struct MomentTests {
    @Test func aMomentIsTheSameInstantOnTheContinuousClockBothWays() {
        let instant = ContinuousClock.now.advanced(by: .milliseconds(1_500))
        let moment = Moment(instant)
        #expect(moment.instant == instant)
        #expect(Moment(moment.instant) == moment)
        // Before the origin (the first moment asked for) too.
        let earlier = ContinuousClock.now.advanced(by: .seconds(-3_600))
        #expect(Moment(earlier).instant == earlier)
        #expect(Moment(earlier) < moment)
    }

    @Test func arithmeticAndOrderMatchTheClocks() {
        let a = Moment.now
        let b = a.advanced(by: .seconds(2))
        #expect(a < b && !(b < a))
        #expect(a.duration(to: b) == .seconds(2))
        #expect(b - a == .seconds(2))
        #expect(b - .seconds(2) == a)
        #expect(a + .milliseconds(2_000) == b)
        #expect(b.instant - a.instant == .seconds(2))
        #expect([b, a, b.advanced(by: .nanoseconds(-1))].sorted() == [a, b.advanced(by: .nanoseconds(-1)), b])
        #expect(Set([a, a.advanced(by: .zero), b]).count == 2)
    }

    @Test func nowMovesForward() {
        let first = Moment.now
        let instant = ContinuousClock.now
        let second = Moment.now
        #expect(first <= Moment(instant) && Moment(instant) <= second)
    }
}
