import HomeAssistant

import Testing
import Foundation
@testable import Templates
import JSON

/// States Home Assistant passes through (template sensors, REST-set states) that are not ordinary numbers: each gives
/// what Home Assistant's own template engine gives, or an evaluation error with a reason; none traps.
struct HostileValueTests {
    static let noon = 1_795_348_800.0
    static let hostile = ["nan", "inf", "-inf", "1e999", "-1e999", "1e30", "9223372036854775807", "-9223372036854775808",
                          "9223372036854775808", "1e308", "-0", "", "unavailable"]

    let context: EvaluationContext = {
        var states: [String: EntityState] = [:]
        for (i, value) in HostileValueTests.hostile.enumerated() {
            states["sensor.h\(i)"] = EntityState(entityID: "sensor.h\(i)", state: value, attributes: ["n": .double(.infinity)], lastChanged: noon)
        }
        states["sensor.n"] = EntityState(entityID: "sensor.n", state: "1000000000", lastChanged: noon)
        states["sensor.max"] = EntityState(entityID: "sensor.max", state: "9223372036854775807", lastChanged: noon)
        states["sensor.min"] = EntityState(entityID: "sensor.min", state: "-9223372036854775808", lastChanged: noon)
        return EvaluationContext(states: states, now: noon, timeZone: .utc)
    }()

    func evaluate(_ source: String) -> Result<TemplateValue, EvaluationError> {
        do { return .success(try Template(source).evaluate(in: context)) } catch let error as EvaluationError {
            return .failure(error)
        } catch {
            Issue.record("\(source) did not compile: \(error)")
            return .failure(EvaluationError("compile"))
        }
    }

    /// Every conversion a rule applies to a state, over every hostile state: a value or a reason, never a trap.
    @Test(arguments: [
        "{{ states('X') | float(0) | round }}", "{{ states('X') | float(0) | round(1) }}", "{{ states('X') | int }}",
        "{{ states('X') | int(0) }}", "{{ states('X') | float | round(2, 'ceil') }}", "{{ states('X') | round(0, 'floor', 0) }}",
        "{{ states('X') | timestamp_custom('%H:%M') }}", "{{ states('X') | float(0) | timestamp_custom('%H:%M', true, 'x') }}",
        "{{ as_timestamp(states('X')) }}", "{{ as_datetime(states('X')) }}", "{{ states('X') | as_datetime }}",
        "{{ timedelta(seconds=states('X') | float(0)) }}", "{{ timedelta(days=states('X') | float(0)) }}",
        "{{ states('X') | as_timedelta }}", "{{ now() + timedelta(seconds=states('X') | float(0)) }}",
        "{{ (states('X') | float(0)) * 2 }}", "{{ (states('X') | int(0)) % 7 }}", "{{ -(states('X') | int(0)) }}",
        "{{ (states('X') | int(0)) // -1 }}", "{{ (states('X') | int(0)) | abs }}", "{{ (states('X') | int(0)) ** 3 }}",
        "{{ round(states('X') | float(0), states('X') | float(0)) }}", "{{ state_attr('X', 'n') | int(5) }}",
        "{{ (state_attr('X', 'n') | float) | timestamp_custom }}", "{{ 'x' * (states('X') | int(0)) }}",
        "{{ states.sensor.h0.last_changed + timedelta(days=states('X') | float(0)) }}",
        "{{ as_datetime(states('X') | float(0)).isoformat() }}", "{{ now().strftime('%Y') }}",
    ])
    func neverTraps(template: String) {
        for i in Self.hostile.indices {
            _ = evaluate(template.replacingOccurrences(of: "'X'", with: "'sensor.h\(i)'"))
        }
    }

    @Test func nanAndInfinityPassThroughAsPythonFloats() throws {
        #expect(try evaluate("{{ states('sensor.h0') | float(0) }}").get().text == "nan")
        #expect(try evaluate("{{ states('sensor.h1') | float(0) }}").get().text == "inf")
        #expect(try evaluate("{{ states('sensor.h2') | float(0) }}").get().text == "-inf")
        #expect(try evaluate("{{ states('sensor.h3') | float(0) }}").get().text == "inf")
        #expect(try evaluate("{{ states('sensor.h0') | float(0) | round(1) }}").get().text == "nan")
        #expect(try evaluate("{{ states('sensor.h1') | float(0) | round(1) }}").get().text == "inf")
    }

    @Test func wholeNumbersOfNanAndInfinityTakeTheDefaultOrFail() {
        #expect(evaluate("{{ states('sensor.h0') | int(7) }}") == .success(.int(7)))
        #expect(evaluate("{{ states('sensor.h1') | int(7) }}") == .success(.int(7)))
        #expect(evaluate("{{ states('sensor.h0') | float(0) | round(0, 'common', 3) }}") == .success(.int(3)))
        #expect(evaluate("{{ states('sensor.h1') | float(0) | round }}")
                    == .failure(EvaluationError("round of inf has no whole-number value")))
        #expect(evaluate("{{ states('sensor.h5') | float(0) | round }}")
                    == .failure(EvaluationError("round of 1e+30 has no whole-number value within 64 bits")))
        guard case .failure(let error) = evaluate("{{ states('sensor.h0') | int }}") else { Issue.record("int(nan) succeeded"); return }
        #expect(error.message == "int got string 'nan', which is not a number, and no default")
    }

    @Test func timesOutsidePythonsDatetimeFailOrTakeTheDefault() {
        #expect(evaluate("{{ states('sensor.h0') | timestamp_custom('%H:%M', true, 'never') }}") == .success(.string("never")))
        #expect(evaluate("{{ as_timestamp(states('sensor.h1'), 0) }}") == .success(.int(0)))
        #expect(evaluate("{{ as_datetime(1e12, 'far') }}") == .success(.string("far")))
        #expect(evaluate("{{ as_datetime(states('sensor.h0')) }}") == .success(.none), "a string Home Assistant cannot read gives None")
        #expect(evaluate("{{ as_datetime(states('sensor.h0') | float(0)) }}")
                    == .failure(EvaluationError("as_datetime got float nan, which is not a date or time")))
        #expect(evaluate("{{ as_datetime(253402300799) }}") == .success(.datetime(253_402_300_799)))
        #expect(evaluate("{{ now() + timedelta(days=3000000) }}")
                    == .failure(EvaluationError("date value out of range: 260995348800.0 seconds since 1970 is outside years 1–9999")))
        #expect(evaluate("{{ timedelta(seconds=states('sensor.h0') | float(0)) }}")
                    == .failure(EvaluationError("timedelta of nan: cannot convert float NaN to integer")))
        #expect(evaluate("{{ timedelta(days=1e10) }}")
                    == .failure(EvaluationError("timedelta of 864000000000000.0 seconds is beyond ±999,999,999 days")))
        #expect(evaluate("{{ timedelta(days=999999999) }}").map(\.text) == .success("999999999 days, 0:00:00"))
        #expect(evaluate("{{ timedelta(days=-999999999) }}").map(\.text) == .success("-999999999 days, 0:00:00"))
    }

    @Test func integerArithmeticAtTheLimitsFailsWithAReason() {
        let overflow = "is beyond 64-bit integers (±9,223,372,036,854,775,807)"
        for template in ["{{ -(states('sensor.min') | int) }}", "{{ states('sensor.min') | int | abs }}",
                         "{{ (states('sensor.min') | int) // -1 }}", "{{ (states('sensor.max') | int) + 1 }}",
                         "{{ (states('sensor.max') | int) * 2 }}", "{{ 2 ** 64 }}", "{{ (states('sensor.min') | int) - 1 }}"] {
            guard case .failure(let error) = evaluate(template) else { Issue.record("\(template) did not fail"); continue }
            #expect(error.message.hasPrefix("integer overflow: "), "\(template)")
            #expect(error.message.hasSuffix(overflow), "\(template)")
        }
        #expect(evaluate("{{ (states('sensor.min') | int) % -1 }}") == .success(.int(0)))
        #expect(evaluate("{{ (states('sensor.max') | int) % 10 }}") == .success(.int(7)))
        #expect(evaluate("{{ 2 ** 62 }}") == .success(.int(4_611_686_018_427_387_904)))
        #expect(evaluate("{{ (-2) ** 63 }}") == .success(.int(.min)))
    }

    @Test func pythonSignsForFloorDivisionAndModulo() {
        #expect(evaluate("{{ -7 // 2 }} {{ 7 // -2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ -7.5 % 2 }} {{ 7.5 % -2 }}")
                    == .success(.string("-4 -4 2 -2 0.5 -0.5")))
        #expect(evaluate("{{ 9223372036854775807 // 2 }}") == .success(.int(4_611_686_018_427_387_903)))
    }

    @Test func stringRepetitionIsCapped() {
        #expect(evaluate("{{ 'ab' * 3 }}") == .success(.string("ababab")))
        #expect(evaluate("{{ 'ab' * -3 }}") == .success(.string("")))
        #expect(evaluate("{{ 'x' * (states('sensor.n') | int) }}")
                    == .failure(EvaluationError("repeating a 1-character text 1000000000 times would make 1000000000 characters; the limit is 65536")))
        #expect(evaluate("{{ 'xy' * (states('sensor.max') | int) }}")
                    == .failure(EvaluationError("repeating a 2-character text 9223372036854775807 times would make 9223372036854775807 characters; the limit is 65536")))
        guard case .failure(let error) = evaluate("{{ ('x' * 60000) | replace('x', 'yy') }}") else {
            Issue.record("replace grew without bound"); return
        }
        #expect(error.message == "replacing 60000 × 1 characters with 2 would make 120000 characters; the limit is 65536")
    }

    @Test func moreOfTheLibraryFailsWithReasons() {
        #expect(evaluate("{{ 'ab' | ord }}") == .failure(EvaluationError("ord() expected a character, but string of length 2 found")))
        #expect(evaluate("{{ '%%%' | base64_decode }}") == .failure(EvaluationError("base64_decode got '%%%', which is not base64 of UTF-8 text")))
        #expect(evaluate("{{ 'abc' | truncate(1) }}") == .failure(EvaluationError("truncate: expected length >= 3, got 1")))
        #expect(evaluate("{{ 'x' | center(1000000) }}")
                    == .failure(EvaluationError("center(1000000) would make 1000000 characters; the limit is 65536")))
        #expect(evaluate("{{ [1] | map('nothing') | list }}") == .failure(EvaluationError("map needs a filter name or attribute=…, got 'nothing'")))
        #expect(evaluate("{{ [1] | select('sometimes') | list }}") == .failure(EvaluationError("unknown test \"sometimes\" in select/reject")))
        #expect(evaluate("{{ [] | median }}") == .failure(EvaluationError("median needs a non-empty list")))
    }

    @Test func formattingIsBounded() {
        #expect(evaluate("{{ '%999999999d' % 1 }}")
                    == .failure(EvaluationError("format width or precision 999999999 is too large (at most 65536)")))
        #expect(evaluate("{{ '{:>999999999}'.format('x') }}")
                    == .failure(EvaluationError("format width 999999999 is too large (at most 65536)")))
        #expect(evaluate("{{ '%d' % 'x' }}") == .failure(EvaluationError("%d format: a real number is required, not string")))
        #expect(evaluate("{{ '%s %s' % 1 }}") == .failure(EvaluationError("not enough arguments for format string")))
        #expect(evaluate("{{ '%d' % states('sensor.h1') | float(0) }}")
                    == .failure(EvaluationError("%d format: cannot convert inf to an integer")))
    }

    @Test func slicesAtTheLimitsAreTotal() {
        #expect(evaluate("{{ [1, 2, 3][::9223372036854775807] }}") == .success(.list([.int(1)])))
        #expect(evaluate("{{ [1, 2, 3][-9223372036854775807:9223372036854775807] }}") == .success(.list([.int(1), .int(2), .int(3)])))
        #expect(evaluate("{{ 'abc'[::-9223372036854775807] }}") == .success(.string("c")))
        #expect(evaluate("{{ [1][::0] }}") == .failure(EvaluationError("slice step cannot be zero")))
    }

    @Test func theLibraryFailsWithReasonsNotTraps() {
        #expect(evaluate("{{ range(1000000000) | list }}")
                    == .failure(EvaluationError("range(1000000000) has 1000000000 numbers; the limit is 65536")))
        #expect(evaluate("{{ range(1, 5, 0) }}") == .failure(EvaluationError("range() step must not be zero")))
        #expect(evaluate("{{ -1 | sqrt }}") == .failure(EvaluationError("sqrt of -1.0: math domain error")))
        #expect(evaluate("{{ 'x' | sqrt(0) }}") == .success(.int(0)))
        #expect(evaluate("{{ 0 | log }}") == .failure(EvaluationError("log of 0.0: math domain error")))
        #expect(evaluate("{{ [1, 'a'] | sort }}") == .failure(EvaluationError("cannot compare integer 1 with string 'a'")))
        #expect(evaluate("{{ [] | average(7) }}") == .success(.int(7)))
        #expect(evaluate("{{ [9223372036854775807, 1] | sum }}")
                    == .failure(EvaluationError("integer overflow: 9223372036854775807 + 1 is beyond 64-bit integers (±9,223,372,036,854,775,807)")))
    }

    /// Python's str(timedelta) for values whose microseconds no longer fit in 64 bits.
    @Test func durationTextOverTheWholeRange() {
        #expect(TemplateValue.durationText(86_399_999_999_999) == "999999999 days, 23:59:59")
        #expect(TemplateValue.durationText(-10) == "-1 day, 23:59:50")
        #expect(TemplateValue.durationText(.infinity) == "999999999 days, 23:59:59")
        #expect(TemplateValue.durationText(.nan) == "0:00:00")
        #expect(TemplateValue.durationText(1.5) == "0:00:01.500000")
    }
}
