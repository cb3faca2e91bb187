import Testing
@testable import Templates

/// Every filter is answered by exactly one family (NumberFilters, TextFilters, TimeFilters, SequenceFilters,
/// ValueFilters): none is left to the dispatcher's "not implemented", none is answered twice.
struct FilterFamilyTests {
    typealias Family = @Sendable (Filter, TemplateValue, [TemplateValue], [String: TemplateValue], TemplateValue?, EvaluationContext) throws -> TemplateValue?

    static let families: [(String, Family)] = [
        ("numbers", { try NumberFilters.apply($0, $1, $2, $3, fallback: $4, context: $5) }),
        ("text", { try TextFilters.apply($0, $1, $2, $3, fallback: $4, context: $5) }),
        ("time", { try TimeFilters.apply($0, $1, $2, $3, fallback: $4, context: $5) }),
        ("sequences", { try SequenceFilters.apply($0, $1, $2, $3, fallback: $4, context: $5) }),
        ("values", { try ValueFilters.apply($0, $1, $2, $3, fallback: $4, context: $5) }),
    ]

    @Test(arguments: Filter.allCases) func isAnsweredByExactlyOneFamily(filter: Filter) {
        let context = EvaluationContext(states: [:], now: 1_700_000_000)
        var answering: [String] = []
        for (name, family) in Self.families {
            // A family that does not know the filter returns nil without looking at the value; one that does
            // answers or refuses this value.
            let answered: Bool
            do { answered = try family(filter, .string("3"), [], [:], nil, context) != nil } catch { answered = true }
            if answered { answering.append(name) }
        }
        #expect(answering.count == 1, "\(filter.rawValue) is answered by \(answering)")
    }
}
