import Testing
@testable import Platform

/// The end of a loop's time slice: over at once when it has no length, not before when it has one, and never an
/// overflow for a length no clock could reach.
struct SliceDeadlineTests {
    @Test func aSliceWithNoTimeIsOverAtOnce() {
        #expect(SliceDeadline(after: .zero).isPast)
        #expect(SliceDeadline(after: .milliseconds(-20)).isPast)
        #expect(SliceDeadline(after: .seconds(Int64.min)).isPast)
        #expect(SliceDeadline(after: .seconds(Int64.min) * 10).isPast)
        #expect(SliceDeadline(after: Duration(attoseconds: .min)).isPast)
    }

    @Test func aSliceOfAnHourIsNotOverYet() {
        #expect(!SliceDeadline(after: .seconds(3_600)).isPast)
        #expect(!SliceDeadline(after: .seconds(Int64.max)).isPast)
        #expect(!SliceDeadline(after: .nanoseconds(Int64.max)).isPast)
        // Past what a Duration's seconds hold as an Int64: a deadline this far is an engine's "no hurry".
        #expect(!SliceDeadline(after: .seconds(Int64.max) * 10).isPast)
        #expect(!SliceDeadline(after: Duration(attoseconds: .max)).isPast)
    }
}
