import Foundation
import HomeAssistant

import Testing
@testable import Templates
import JSON

/// The template language against fixed states and a fixed clock.
struct TemplateTests {
    /// 2026-11-22T12:00:00+00:00
    static let noon = 1_795_348_800.0

    let context = EvaluationContext(states: [
        "sensor.washer_progress": EntityState(entityID: "sensor.washer_progress", state: "65.4", attributes: ["unit_of_measurement": "%"], lastChanged: noon - 600),
        "sensor.washer_status": EntityState(entityID: "sensor.washer_status", state: "running", attributes: ["friendly_name": "Washer"], lastChanged: noon - 3600),
        "timer.laundry": EntityState(entityID: "timer.laundry", state: "active", attributes: [
            "duration": "1:30:00", "remaining": "1:25:00", "finishes_at": "2026-11-22T13:25:00+00:00",
        ], lastChanged: noon - 300),
        "sensor.minutes_left": EntityState(entityID: "sensor.minutes_left", state: "42", lastChanged: noon),
        "sensor.offline": EntityState(entityID: "sensor.offline", state: "unavailable", lastChanged: noon),
        "sensor.charge": EntityState(entityID: "sensor.charge", state: "80", attributes: ["nested": ["level": 3]], lastChanged: noon),
    ], now: noon, timeZone: .utc)

    func value(_ source: String) throws -> TemplateValue {
        try Template(source).evaluate(in: context)
    }

    /// `has_value('id')` with a literal id takes a fast form chosen when compiling: it gives what the general call gives.
    @Test(arguments: [nil, "unknown", "unavailable", "", "on", "0", "None"])
    func hasValueFastFormMatchesTheGeneralCall(state: String?) throws {
        var states: [String: EntityState] = [:]
        if let state { states["sensor.x"] = EntityState(entityID: "sensor.x", state: state, lastChanged: Self.noon) }
        let context = EvaluationContext(states: states, now: Self.noon, timeZone: .utc)
        let fast = try Template("{{ has_value('sensor.x') }}").evaluate(in: context)
        let general = try Template("{{ has_value('sensor.' ~ 'x') }}").evaluate(in: context)
        #expect(fast == general)
        #expect(fast == .bool(state != nil && state != "unknown" && state != "unavailable"))
        // The literal id is what makes it fast: compiled to the fast form, the computed one left a call.
        let literal = TemplateParser.fastForm(.call(.hasValue, [.literal(.string("sensor.x"))], keywords: []))
        let computed = TemplateParser.fastForm(.call(.hasValue, [.variable("id")], keywords: []))
        if case .hasValue("sensor.x") = literal {} else { Issue.record("has_value('sensor.x') was not compiled to its fast form") }
        if case .call(.hasValue, _, _) = computed {} else { Issue.record("has_value(id) changed form") }
    }

    @Test(arguments: [
        ("{{ states('sensor.washer_progress') | float(0) / 100 }}", TemplateValue.double(0.654)),
        ("{{ states('sensor.washer_progress') | int(0) }}%", .string("65%")),
        ("{{ states('sensor.washer_progress') | round }}", .int(65)),
        ("{{ states('sensor.washer_progress') | float | round(1) }}", .double(65.4)),
        ("{{ is_state('sensor.washer_status', 'running') }}", .bool(true)),
        ("{{ is_state('sensor.washer_status', ['idle', 'done']) }}", .bool(false)),
        ("{{ is_state_attr('timer.laundry', 'duration', '1:30:00') }}", .bool(true)),
        ("{{ state_attr('timer.laundry', 'finishes_at') }}", .string("2026-11-22T13:25:00+00:00")),
        ("{{ state_attr('timer.laundry', 'missing') }}", .none),
        ("{{ states('sensor.missing') }}", .string("unknown")),
        ("{{ has_value('sensor.offline') }}", .bool(false)),
        ("{{ has_value('sensor.washer_status') }}", .bool(true)),
        ("{{ has_value('sensor.missing') }}", .bool(false)),
        ("{{ 'Done' if is_state('sensor.washer_status', 'idle') else 'Washing' }}", .string("Washing")),
        ("{{ 1 + 2 * 3 - 4 / 2 }}", .double(5.0)),
        ("{{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 10 }}", .string("3 1 1024")),
        ("{{ 'a' ~ 1 ~ none }}", .string("a1None")),
        ("{{ not (1 > 2) and 3 >= 3 or false }}", .bool(true)),
        ("{{ 'run' in states('sensor.washer_status') }}", .bool(true)),
        ("{{ states.sensor.washer_status.state | upper }}", .string("RUNNING")),
        ("{{ states.timer.laundry.attributes.remaining }}", .string("1:25:00")),
        ("{{ states.sensor.washer_status.name }}", .string("Washer")),
        ("{{ state_attr('sensor.charge', 'nested')['level'] }}", .int(3)),
        ("{{ 'washer dryer' | title | replace('Dryer', 'Oven') }}", .string("Washer Oven")),
        ("{{ [3, 1, 2] | max }} {{ min(4, 2, 9) }} {{ -5 | abs }} {{ -2 ** 2 }}", .string("3 2 5 4")),
        ("{{ state_attr('sensor.x', 'y') | default('n/a') }}", .none),
        ("{{ state_attr('sensor.x', 'y') | default('n/a', true) }}", .string("n/a")),
        ("{{ states.sensor.x.y | default('n/a') }}", .string("n/a")),
        ("{{ states('sensor.washer_status') is string }}", .bool(true)),
        ("{% set x %}a{{ 1 + 1 }}{% endset %}{{ x ~ '!' }}", .string("a2!")),
        ("{% macro pct(v, unit='%') %}{{ (v * 100) | round }}{{ unit }}{% endmacro %}{{ pct(0.456) }} {{ pct(0.5, unit=' pct') }}", .string("46% 50 pct")),
        ("{% for i in range(6) if i is even %}{{ i }}/{{ loop.length }} {% endfor %}", .string("0/3 2/3 4/3")),
        ("{{ {'a': {'b': 1}}['a'] }}", .mapping(["b": .int(1)])),
        ("{{ 'x\\1y' | length }} {{ 'a\\x41' }}", .string("3 aA")),
        // A digit with a combining mark is one Character but two scalars; Python reads '\2' then the mark (a fuzz
        // finding: the octal escape trapped on it), and re.sub's '\\2' is group 2 then the mark.
        ("{{ '\\2\u{20D7}x' | list | map('ord') | list }}", .list([.int(2), .int(8407), .int(120)])),
        ("{{ '\\12\u{20D7}' | list | map('ord') | list }}", .list([.int(10), .int(8407)])),
        ("{{ 'ab' | regex_replace('(a)(b)', '\\\\2\u{20D7}') }}", .string("b\u{20D7}")),
        // Python's float(): underscores between digits, spaces, inf/nan; never Swift's hexadecimal floats.
        ("{{ '1_000' | float }} {{ ' 5 ' | float }} {{ '0x10' | float(0) }} {{ '1__0' | float(7) }} {{ 'Infinity' | float }}", .string("1000.0 5.0 0 7 inf")),
    ])
    func evaluates(source: String, expected: TemplateValue) throws {
        #expect(try value(source) == expected)
    }

    @Test func countdownTimestampsForTimeUntil() throws {
        #expect(try value("{{ state_attr('timer.laundry', 'finishes_at') | as_datetime }}") == .datetime(Self.noon + 5100))
        #expect(try value("{{ (now() + as_timedelta(state_attr('timer.laundry', 'remaining'))).isoformat() }}") == .string("2026-11-22T13:25:00+00:00"))
        #expect(try value("{{ now() + as_timedelta(state_attr('timer.laundry', 'remaining')) }}").text == "2026-11-22 13:25:00+00:00",
                "str() of a datetime has a space, as Python's")
        #expect(try value("{{ now() + as_timedelta(state_attr('timer.laundry', 'remaining')) }}").json == "2026-11-22T13:25:00+00:00",
                "a payload field gets ISO 8601")
        #expect(try value("{{ now() + timedelta(minutes=states('sensor.minutes_left') | float(0)) }}") == .datetime(Self.noon + 2520))
        #expect(try value("{{ (as_timestamp(now()) + 90) | timestamp_custom('%H:%M:%S') }}") == .string("12:01:30"))
        #expect(try value("{{ as_timestamp(state_attr('timer.laundry', 'finishes_at')) - as_timestamp(now()) }}") == .double(5100))
        #expect(try value("{{ now() - states.sensor.washer_status.last_changed }}").text == "1:00:00")
    }

    @Test func timestampCustomFormats() throws {
        #expect(try value("{{ 1795348800 | timestamp_custom('%a %d %b %Y %I:%M %p %j') }}") == .string("Sun 22 Nov 2026 12:00 PM 326"))
        #expect(try value("{{ 1795348800 | timestamp_custom('%H:%M', false) }}") == .string("12:00"))
    }

    @Test func textAroundExpressionsIsJoinedAsText() throws {
        #expect(try value("Washer at {{ states('sensor.washer_progress') | int }}% ({{ 0.5 }})") == .string("Washer at 65% (0.5)"))
        #expect(try value("plain text") == .string("plain text"))
        #expect(try value("{# a comment #}{{ 1 }}") == .int(1))
    }

    @Test func theEntitiesATemplateReadsAreFoundAtLoad() throws {
        let template = try Template("{{ states('sensor.a') | float(0) + state_attr('timer.b', 'x') | float(0) if is_state('input_boolean.c', 'on') else states.sensor.d.state }}")
        #expect(template.entityIDs == ["sensor.a", "timer.b", "input_boolean.c", "sensor.d"])
        #expect(try Template("Fixed").isConstant)
    }

    @Test(arguments: [
        ("{{ area_name('kitchen') }}", "area_name reads Home Assistant's registries"),
        ("{{ 'light.a' | area_id }}", "area_id reads Home Assistant's registries"),
        ("{% for e in area_entities('kitchen') %}{{ e }}{% endfor %}", "area_entities reads Home Assistant's registries"),
        ("{{ state_translated('sensor.washer') }}", "state_translated needs Home Assistant's translations"),
        ("{{ states('sensor.washer_power', rounded=True, with_unit=True) }}", "states(…, rounded=True) uses the display precision in Home Assistant's entity registry"),
        ("{{ 'light.a' is is_device_attr('manufacturer', 'IKEA') }}", "is_device_attr reads Home Assistant's registries"),
    ])
    func whatOnlyHomeAssistantComputesIsRenderedByIt(source: String, reason: String) throws {
        let template = try Template(source)
        #expect(template.renderedByHomeAssistant == reason)
        #expect(template.source == source)
        #expect(template.entityIDs.isEmpty && !template.isConstant)
        #expect(throws: EvaluationError("rendered by Home Assistant (\(reason)); no result from it yet")) {
            try template.evaluate(in: EvaluationContext(states: [:], now: 0))
        }
        let rendered = EvaluationContext(states: [:], now: 0, renderedByHomeAssistant: [source: .success(.string("Kitchen"))])
        #expect(try template.evaluate(in: rendered) == .string("Kitchen"))
    }

    @Test func domainsAndEveryEntityReadsAreFoundAtLoad() throws {
        let lights = try Template("{{ states.light | selectattr('state', 'eq', 'on') | list | count }} {{ states.sensor.washer.state }}")
        #expect(lights.domains == ["light"])
        #expect(lights.entityIDs == ["sensor.washer"])
        #expect(!lights.readsEveryEntity)
        #expect(lights.reads.contains("light.kitchen") && lights.reads.contains("sensor.washer") && !lights.reads.contains("sensor.dryer"))
        #expect(try Template("{{ expand('group.downstairs') | count }}").readsEveryEntity)
        #expect(try Template("{{ states | count }}").readsEveryEntity)
        #expect(try !Template("{{ states('sensor.a') }}").readsEveryEntity)
        let computed = try Template("{% for id in ['sensor.a', 'sensor.b'] %}{{ states(id) }}{% endfor %}")
        #expect(computed.readsEveryEntity && computed.entityIDs.isEmpty)
    }

    @Test(arguments: [
        ("{{ states('sensor.offline') | float }}", "float got string 'unavailable', which is not a number, and no default"),
        ("{{ 1 / 0 }}", "division by zero"),
        ("{{ 'a' - 1 }}", "unsupported operand types for -: string 'a' and integer 1"),
        // None.b is Jinja's undefined (printed as nothing); a lookup in it fails.
        ("{{ state_attr('sensor.missing', 'a').b.c }}", "none has no attribute \"b\": it has no attribute \"c\""),
        ("{{ as_timestamp('soon') }}", "as_timestamp got string 'soon', which is not a date or time"),
    ])
    func failuresAreEvaluationErrorsNotCrashes(source: String, message: String) {
        #expect(throws: EvaluationError(message)) { try value(source) }
    }

    @Test func defaultsRescueFailedConversions() throws {
        #expect(try value("{{ states('sensor.offline') | float(0) }}") == .int(0))
        #expect(try value("{{ states('sensor.offline') | int(-1) }}") == .int(-1))
        #expect(try value("{{ as_timestamp('never', 0) }}") == .int(0))
    }

    @Test(arguments: [
        ("{{ states('sensor.a' }}", 21, "expected \")\" but found end of expression"),
        ("{{ foo }}", 3, "unknown name \"foo\""),
        ("{{ 1 | frobnicate }}", 7, "unknown filter \"frobnicate\""),
        ("{{ states(entity) }}", 10, "unknown name \"entity\""),
        ("{{ states() }}", 3, "states() needs an entity id"),
        ("{{ states(x ~ 'y') }}", 10, "unknown name \"x\""),
        ("{% while true %}a{% endwhile %}", 2, "unknown statement \"while\"; supported: if, elif, else, for, set, macro, raw"),
        ("{{ 1 + }}", 7, "unexpected end of expression"),
        ("{{ 'open", 0, "\"{{\" is not closed"),
        ("{{ stats('sensor.a') }}", 3, "unknown function \"stats\"; did you mean states?"),
        ("{{ area_nme('kitchen') }}", 3, "unknown function \"area_nme\"; did you mean area_name?"),
        ("{{ 'x' | slugfy }}", 9, "unknown filter \"slugfy\"; did you mean slugify?"),
    ])
    func syntaxErrorsSayWhatAndWhere(source: String, offset: Int, message: String) {
        do {
            _ = try Template(source)
            Issue.record("\(source) compiled")
        } catch {
            #expect(error.offset == offset, "\(source): \(error)")
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    @Test func unknownFilterListsWhatIsSupported() {
        #expect(throws: Template.CompileError.self) { try Template("{{ 1 | nope }}") }
        do { _ = try Template("{{ 1 | nope }}") } catch {
            #expect(error.message.contains("supported: float, int, round"))
        }
    }

    @Test func valuesPrintAsPythonDoes() {
        #expect(TemplateValue.double(42.0).text == "42.0")
        #expect(TemplateValue.bool(true).text == "True")
        #expect(TemplateValue.timedelta(-10).text == "-1 day, 23:59:50")
        #expect(TemplateValue.timedelta(90061.5).text == "1 day, 1:01:01.500000")
        #expect(TemplateValue.list([.int(1), .string("a")]).text == "[1, 'a']")
    }

    @Test(arguments: [
        ("{% if states('sensor.minutes_left') | int > 30 %}long{% else %}short{% endif %}", "long"),
        ("{% if false %}a{% elif true %}b{% else %}c{% endif %}", "b"),
        ("{% for i in [1, 2, 3] %}{{ loop.index0 }}{{ i }}{% if loop.first %}!{% endif %}{% endfor %}", "01!1223"),
        ("{% for x in [] %}{{ x }}{% else %}empty{% endfor %}", "empty"),
        ("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "6"),
        ("{% set x = 1 %}{% for i in [5] %}{% set x = i %}{% endfor %}{{ x }}", "1"),
        ("a  {%- if true %} b {% endif -%}  c", "a b c"),
        ("{% raw %}{{ x }}{% endraw %}", "{{ x }}"),
        ("{% for k, v in state_attr('sensor.charge', 'nested').items() %}{{ k }}={{ v }}{% endfor %}", "level=3"),
        ("line\n", "line"),
    ])
    func statementsRenderAsJinja(source: String, expected: String) throws {
        #expect(try value(source) == .string(expected))
    }

    @Test(arguments: [
        ("{% if true %}a", 2, "{% if %} is not closed with {% endif %}"),
        ("{% endfor %}", 2, "{% endfor %} without its opening statement"),
        ("{% for in x %}{% endfor %}", 6, "{% for %} needs a name, or names separated by commas, before \"in\""),
        ("{% set ns.x = 1 %}", 6, "ns is not set: make it with {% set ns = namespace() %} first"),
        ("{{ y }}{% set y = 1 %}", 3, "unknown name \"y\""),
        ("{% macro m() %}{{ m() }}{% endmacro %}", 18, "unknown function \"m\""),
        ("{% macro m(x) %}{{ x }}", 2, "{% macro m %} is not closed with {% endmacro %}"),
    ])
    func statementMistakesSayWhatAndWhere(source: String, offset: Int, message: String) {
        do {
            _ = try Template(source)
            Issue.record("compiled: \(source)")
        } catch {
            #expect(error.offset == offset, "\(source)")
            #expect(error.message.hasPrefix(message), "\(error.message)")
        }
    }

    /// now() is in the configured zone and prints its offset; utcnow() and as_datetime are UTC; both are one instant.
    @Test func datetimesCarryTheirZone() throws {
        let berlin = EvaluationContext(states: context.states, now: Self.noon, timeZone: .fixed(secondsFromGMT: 3600))
        func text(_ source: String) throws -> String { try Template(source).evaluate(in: berlin).text }
        #expect(try text("{{ now() }}") == "2026-11-22 13:00:00+01:00")
        #expect(try text("{{ now().hour }} {{ utcnow().hour }} {{ now() == utcnow() }}") == "13 12 True")
        #expect(try text("{{ as_local(as_datetime('2026-11-22T23:30:00+00:00')).day }}") == "23")
        #expect(try text("{{ as_datetime('2026-11-22T23:30:00+00:00').strftime('%H:%M %z') }}") == "23:30 +0000")
        #expect(try text("{{ (now() + timedelta(hours=1)).isoformat() }}") == "2026-11-22T14:00:00+01:00")
        #expect(try Template("{{ now() }}").evaluate(in: berlin).json == "2026-11-22T13:00:00+01:00")
    }

    /// Home Assistant's dt_util._get_timestring, unit by unit.
    @Test(arguments: [(0, 1, "0 seconds"), (1, 1, "1 second"), (59, 1, "59 seconds"), (90, 1, "2 minutes"), (150, 1, "2 minutes"),
                      (3600 + 1800, 1, "2 hours"), (3600 + 1800, 2, "1 hour 30 minutes"), (86_400 * 400, 2, "1 year 1 month"),
                      (86_400 + 3600 + 61, 3, "1 day 1 hour 1 minute")])
    func timeText(seconds: Int, precision: Int, expected: String) {
        #expect(TimeText.since(seconds, precision: precision) == expected)
    }

    @Test func relativeTimesAgainstTheClock() throws {
        #expect(try value("{{ time_since(now() - timedelta(hours=3)) }}") == .string("3 hours"))
        #expect(try value("{{ time_until(now() + timedelta(minutes=90), 2) }}") == .string("1 hour 30 minutes"))
        #expect(try value("{{ relative_time(now() + timedelta(hours=1)) }}") == .datetime(Self.noon + 3600))
        #expect(try value("{{ today_at('13:05') }}").text == "2026-11-22 13:05:00+00:00")
        #expect(throws: EvaluationError("could not convert str to datetime: '25:00'")) { try value("{{ today_at('25:00') }}") }
    }
}
