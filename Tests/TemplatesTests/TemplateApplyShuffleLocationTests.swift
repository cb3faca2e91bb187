import Foundation
import HomeAssistant
import JSON

import Testing
@testable import Templates

/// `apply`, seeded `shuffle`, `distance` and `closest` rendered here as Home Assistant 2026.11 renders them (the
/// figures are its answers, or CPython 3.11's random.Random and core's util/location.py run on the same inputs).
struct TemplateApplyShuffleLocationTests {
    static let noon = 1_795_348_800.0

    static func state(_ id: String, latitude: Double?, longitude: Double?) -> EntityState {
        var attributes: [String: JSONValue] = [:]
        if let latitude { attributes["latitude"] = .double(latitude) }
        if let longitude { attributes["longitude"] = .double(longitude) }
        return EntityState(entityID: id, state: "happy", attributes: EntityAttributes(attributes), lastChanged: noon)
    }

    /// Core's own test fixtures (tests/helpers/template/test_init.py), home at 0, 0.
    static let places = [
        state("zone.home", latitude: 0, longitude: 0), state("test.object", latitude: 32.87336, longitude: -117.22943),
        state("test.object_2", latitude: 0, longitude: 0), state("test_domain.closest_home", latitude: 0.1, longitude: 0.1),
        state("test_domain.closest_zone", latitude: 0.2, longitude: 0.2), state("test_domain.object", latitude: 0.1, longitude: 0.1),
        state("zone.far_away", latitude: 0.3, longitude: 0.3), state("test.nowhere", latitude: nil, longitude: 3),
    ]

    func render(_ source: String, home: HomeLocation? = nil) throws -> String {
        var map: [String: EntityState] = [:]
        for state in Self.places { map[state.entityID] = state }
        let context = EvaluationContext(states: map, order: Self.places.map(\.entityID), now: Self.noon, timeZone: .utc, home: home)
        return try Template(source).evaluate(in: context).text
    }

    @Test(arguments: [
        ("{%- macro add_foo(arg) -%}{{arg}}foo{%- endmacro -%}{{ ['a', 'b', 'c'] | map('apply', add_foo) | list }}", "['afoo', 'bfoo', 'cfoo']"),
        ("{{ ['1', '2', '3'] | map('apply', int) | list }}", "[1, 2, 3]"),
        ("{%- macro add(a, b, c) -%}{{ a + b + c }}{%- endmacro -%}{{ apply(5, add, 10, 15) }}", "30"),
        ("{%- macro greet(name, greeting='Hello') -%}{{ greeting }}, {{ name }}!{%- endmacro -%}{{ apply('World', greet, greeting='Hi') }}", "Hi, World!"),
        ("{{ '7' | apply(float) }} {{ 'test.object' | apply(states) }}", "7.0 happy"),
        ("{% for x in [1, 2] %}{{ [x] | map('apply', float) | list }}{% endfor %}", "[1.0][2.0]"),
    ])
    func applyCallsAMacroOrFunctionWithTheValueFirst(source: String, expected: String) throws {
        #expect(try render(source) == expected)
    }

    @Test func applyNeedsACallable() {
        #expect(throws: Template.CompileError.self) { try Template("{{ apply(1) }}") }
        #expect(throws: Template.CompileError.self) { try Template("{{ apply(1, no_such_macro) }}") }
        #expect(throws: Template.CompileError.self) { try Template("{%- macro one(a) -%}{{ a }}{%- endmacro -%}{{ apply(1, one, 2) }}") }
    }

    /// random.Random(seed).shuffle(list(range(1, 11))) in CPython 3.11.
    @Test(arguments: [
        ("42", "[8, 4, 3, 9, 6, 7, 10, 5, 1, 2]"), ("0", "[8, 9, 2, 6, 4, 5, 3, 1, 10, 7]"),
        ("1099511627783", "[1, 6, 3, 4, 7, 2, 9, 5, 8, 10]"), ("-5", "[3, 4, 2, 1, 9, 8, 7, 6, 5, 10]"),
        ("'abc'", "[5, 4, 1, 10, 2, 3, 7, 6, 8, 9]"), ("''", "[5, 1, 9, 3, 2, 6, 10, 7, 4, 8]"),
        ("'Wäsche'", "[10, 6, 3, 2, 5, 9, 7, 4, 8, 1]"),
        // A float seeds with hash(x) as an unsigned 64-bit number (the reviewer's findings: negative and huge floats).
        ("-1.0", "[10, 8, 9, 4, 1, 6, 7, 2, 5, 3]"),
    ])
    func aSeededShuffleIsPythons(seed: String, expected: String) throws {
        #expect(try render("{{ shuffle(range(1, 11) | list, seed=\(seed)) }}") == expected)
        #expect(try render("{{ range(1, 11) | list | shuffle(\(seed)) }}") == expected)
    }

    @Test func floatSeedsAreHashedAsPythonHashesThem() throws {
        // random.Random(x).shuffle(list(range(5))) in CPython 3.11.
        for (seed, expected) in [("3.5", "[1, 3, 0, 4, 2]"), ("1e20", "[0, 2, 4, 1, 3]"), ("-2.5e-7", "[0, 4, 1, 2, 3]"), ("2.0", "[2, 1, 3, 4, 0]")] {
            #expect(try render("{{ range(5) | list | shuffle(\(seed)) }}") == expected, "seed \(seed)")
        }
        #expect(try render("{{ range(10) | list | shuffle(4e18) }}") == "[1, 5, 7, 4, 8, 3, 2, 9, 6, 0]")
    }

    @Test func macroArgumentsAsJinja() throws {
        #expect(try render("{% macro f(x, y) %}[{{ x }}{{ y }}|{{ y is defined }}]{% endmacro %}{{ apply(1, f) }}{{ f(2) }}") == "[1|False][2|False]")
        #expect(try render("{% macro f(x, y=3) %}[{{ x }}{{ y }}]{% endmacro %}{{ f(1, y=2) }}{{ f(x=5) }}") == "[12][53]")
        #expect(throws: Template.CompileError.self) { try Template("{% macro f(x) %}[{{ x }}]{% endmacro %}{{ apply(1, f, x=2) }}") }
        #expect(throws: Template.CompileError.self) { try Template("{% macro f(x) %}[{{ x }}]{% endmacro %}{{ f(1, y=2) }}") }
    }

    /// Jinja reads a literal as ASCII with backslashreplace, then Python's unicode-escape.
    @Test func escapesAsJinjaReadsThem() throws {
        #expect(try render("{{ 'a\\\u{301}' }}|{{ 'a\\\u{301}' | length }}") == "a\\u0301|7")
        #expect(try render("{{ '\\é' }} {{ '\\U0001F600' }} {{ '\\a\\b\\f\\v' | list | map('ord') | list }}") == "\\xe9 😀 [7, 8, 12, 11]")
        #expect(throws: Template.CompileError.self) { try Template("{{ '\\N{LATIN SMALL LETTER A}' }}") }
        #expect(throws: Template.CompileError.self) { try Template("{{ '\\ud83d' }}") }
    }

    /// Python counts, indexes, slices, iterates, searches and splits code points; Swift's Characters join "\r\n", a
    /// letter and its combining mark, a flag (the reviewer's findings, from an entity's state).
    @Test func textIsCodePointsAsInPython() throws {
        #expect(try render("{{ 'a\\r\\nb'.split('\\n') }} {{ 'a\\r\\n'.endswith('\\n') }} {{ 'a\\r\\nb'[:2] | length }} {{ '\\r\\n' | length }}")
                == "['a\\r', 'b'] True 2 2")
        #expect(try render("{{ 'e\\u0301' | length }} {{ ('e\\u0301')[0] }} {{ '\\u0301' in 'e\\u0301' }} {{ 'e\\u0301'.startswith('e') }} {{ '🇳🇱' | length }}")
                == "2 e True True 2")
        #expect(try render("{{ 'e\\u0301' == '\\u00e9' }} {{ 'e\\u0301' < 'f' }} {{ '\\u00e9' > 'e\\u0302' }}") == "False True True",
                "compared code point by code point, not by canonical equivalence")
        #expect(try render("{% for c in 'e\\u0301x' %}[{{ c | length }}]{% endfor %} {{ 'a,b,,c'.split(',') }}") == "[1][1][1] ['a', 'b', '', 'c']")
    }

    @Test func anUnseededShuffleKeepsTheItems() throws {
        #expect(try render("{{ shuffle([1, 2, 3, 4, 5]) | sort }} {{ shuffle(1, 2, 3) | length }}") == "[1, 2, 3, 4, 5] 3")
        #expect(throws: EvaluationError.self) { try render("{{ shuffle('abc') }}") }
        #expect(throws: EvaluationError.self) { try render("{{ shuffle([1], seed=[2]) }}") }
    }

    @Test(arguments: [
        ("{{ distance(states.test.object) }}", "12531.204487000003"),
        ("{{ distance(states.test.object, states.test.object_2) | round }}", "12531"),
        ("{{ distance(states.test.object_2, '32.87336', '-117.22943') | round }}", "12531"),
        ("{{ distance('test.object', 'test.object_2') | round }}", "12531"),
        ("{{ distance(52.5, 13.4, 48.1, 11.6) }}", "505.912847"),
        ("{{ distance('123', 'abc') }} {{ distance(1) }} {{ distance('test.nowhere') }}", "None None None"),
        ("{{ closest(states.test_domain).entity_id }}", "test_domain.object"),
        ("{{ closest(states.zone.far_away, states.test_domain).entity_id }}", "test_domain.closest_zone"),
        ("{{ closest('invalid', 'coord', states) }} {{ closest('zone.nope', states) }}", "None None"),
        ("{{ (states.test_domain | closest(0.3, 0.3)).entity_id }}", "test_domain.closest_zone"),
    ])
    func distanceAndClosestAsHomeAssistant(source: String, expected: String) throws {
        #expect(try render(source) == expected)
    }

    @Test func homeAndTheLengthUnitComeFromHomeAssistantsConfiguration() throws {
        let config: JSONValue = ["latitude": 32.87336, "longitude": -117.22943, "unit_system": ["length": "mi"]]
        let home = try #require(HomeLocation(configuration: config))
        #expect(try render("{{ distance(states.test.object) }} {{ distance(0, 0) | round(3) }}", home: home) == "0.0 7786.529")
        #expect(HomeLocation(configuration: ["latitude": "x", "longitude": 1]) == nil)
        // Without a configuration or zone.home there is no home: said, not guessed.
        #expect(throws: EvaluationError.self) {
            try Template("{{ distance(1, 2) }}").evaluate(in: EvaluationContext(states: [:], now: Self.noon, timeZone: .utc))
        }
    }

    @Test func whatTheyReadIsFollowed() throws {
        let distance = try Template("{{ distance('device_tracker.phone') }}")
        #expect(distance.entityIDs.isSuperset(of: ["zone.home", "device_tracker.phone"]) && !distance.readsEveryEntity)
        #expect(try Template("{{ closest(states.device_tracker).name }}").readsEveryEntity, "closest expands groups, whose members change")
        #expect(try Template("{{ distance(states(x)) }}", variables: ["x"]).readsEveryEntity)
    }
}
