import Platform
import Testing

/// The one "did you mean" every message about an unknown name ends with.
struct SuggestionTests {
    @Test func theClosestNameWithinTwoEditsOrTheFallback() {
        #expect(Suggestion.didYouMean("slugfy", in: ["slugify", "title"]) == #" (did you mean "slugify"?)"#)
        #expect(Suggestion.didYouMean("aivy", in: ["aivi", "islandpulse"], otherwise: "; expected aivi") == #" (did you mean "aivi"?)"#)
        #expect(Suggestion.didYouMean("nothing_alike", in: ["aivi", "islandpulse"], otherwise: "; expected aivi") == "; expected aivi")
        #expect(Suggestion.didYouMean("x", in: []) == "")
        // A swap of neighbours is one edit.
        #expect(Suggestion.closest(to: "satets", in: ["states"]) == "states")
    }
}
