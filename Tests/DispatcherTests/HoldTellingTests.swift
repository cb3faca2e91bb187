@testable import Dispatcher
import Testing

/// A lane held the same way before every push says so once, not with every push.
struct HoldTellingTests {
    @Test func aHoldIsNewsOnceUntilItsReasonChangesOrTheLaneGoesQuiet() {
        var telling = HoldTelling()
        #expect(telling.began(.minInterval) == false, "the first hold is news")
        telling.pushed()
        #expect(telling.began(.minInterval) == true, "held again before the next push: a repeat")
        telling.pushed()
        #expect(telling.began(.minInterval) == true)
        #expect(telling.began(.hourlyBudget) == false, "another reason is news")
        #expect(telling.began(.minInterval) == false, "and so is going back to the first")
        telling.pushed()
        telling.pushed()  // a push nothing held: the lane had gone quiet
        #expect(telling.began(.minInterval) == false, "after a quiet push the same hold is news again")
    }
}
