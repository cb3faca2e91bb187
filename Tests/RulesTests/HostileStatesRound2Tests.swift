import Foundation
import HomeAssistant
@testable import Rules
import Testing
@testable import Templates

/// Issue 29's findings that come from an entity's state or a device's name: each a value or an error with a reason,
/// never a trap, a pinned core, an 18 EB allocation or template code written into a proposal.
struct HostileStatesRound2Tests {
    static let noon = 1_795_348_800.0

    static func context(_ states: [String: String]) -> EvaluationContext {
        EvaluationContext(states: Dictionary(uniqueKeysWithValues: states.map { id, value in
            (id, EntityState(entityID: id, state: value, lastChanged: noon))
        }), now: noon, timeZone: .utc)
    }

    func evaluate(_ source: String, _ states: [String: String] = [:]) -> Result<TemplateValue, EvaluationError> {
        do { return .success(try Template(source).evaluate(in: Self.context(states))) } catch let error as EvaluationError {
            return .failure(error)
        } catch {
            Issue.record("\(source) did not compile: \(error)")
            return .failure(EvaluationError("compile"))
        }
    }

    func failure(_ source: String, _ states: [String: String] = [:]) -> String? {
        if case .failure(let error) = evaluate(source, states) { return error.message }
        return nil
    }

    // MARK: 1. Regular expressions within a budget

    @Test func catastrophicBacktrackingOnAStateIsAnErrorNotAPinnedCore() {
        let state = String(repeating: "a", count: 39) + "!"
        for template in ["{{ states('sensor.x') is match('^(\\\\w+\\\\s?)*$') }}", "{{ states('sensor.x') | regex_search('(a|aa)+$') }}",
                         "{{ states('sensor.x') | regex_replace('(a*)*b', '') }}", "{{ states('sensor.x') | regex_findall('(\\\\w+)+!x') }}"] {
            let message = failure(template, ["sensor.x": state])
            #expect(message?.contains("gave up after 2000000 steps on a 40-character text") == true, "\(template): \(message ?? "no error")")
        }
    }

    @Test func regularExpressionsMatchAsPythonsRe() {
        let cases: [(String, String)] = [
            ("{{ 'aaa' | regex_replace('a*', '-') }}", "--"),
            ("{{ 'abc' | regex_replace('', '-') }}", "-a-b-c-"),
            ("{{ 'aaa' | regex_findall('a*?') }}", "['', 'a', '', 'a', '', 'a', '']"),
            ("{{ 'key=value' | regex_replace('(?P<k>\\\\w+)=(?P<v>\\\\w+)', '\\\\g<v>=\\\\g<k>') }}", "value=key"),
            ("{{ 'abab' | regex_findall('(ab)\\\\1') }}", "['ab']"),
            ("{{ 'AbAB' | regex_findall('(?i)(ab)\\\\1') }}", "['Ab']"),
            ("{{ 'aXbXc' | regex_replace('(?<=a)X', '-') }}", "a-bXc"),
            ("{{ 'line1\\nline2' | regex_findall('(?m)^\\\\w+$') }}", "['line1', 'line2']"),
            ("{{ 'Wäsche 12 min' | regex_findall('\\\\w+') }}", "['Wäsche', '12', 'min']"),
            ("{{ 'x1 y22' | regex_findall('([a-z])(\\\\d+)') }}", "[['x', '1'], ['y', '22']]"),
            ("{{ 'aaa' | regex_match('a{2}') }} {{ 'a{2}' | regex_match('a{') }} {{ 'ab' | regex_match('(?x) a  b # c') }}", "True True True"),
            ("{{ 'aaab' | regex_replace('a++b', 'X') }} {{ 'aaa' | regex_match('(?>a+)a') }}", "X False"),
            ("{{ 'Washer' | regex_replace('^w', 'W', true) }}", "Washer"),
        ]
        for (template, expected) in cases {
            #expect(evaluate(template).map(\.text) == .success(expected), "\(template)")
        }
    }

    @Test func badPatternsGivePythonsErrors() {
        #expect(failure("{{ 'x' | regex_match('a**') }}") == "invalid regular expression 'a**': multiple repeat at position 2")
        #expect(failure("{{ 'x' | regex_match('*a') }}") == "invalid regular expression '*a': nothing to repeat at position 0")
        #expect(failure("{{ 'x' | regex_match('(?<=a+)b') }}") == "invalid regular expression '(?<=a+)b': look-behind requires fixed-width pattern")
        #expect(failure("{{ 'x' | regex_match('a(?i)b') }}")
                == "invalid regular expression 'a(?i)b': global flags not at the start of the expression at position 1")
        #expect(failure("{{ 'x' | regex_match('[z-a]') }}") == "invalid regular expression '[z-a]': bad character range z-a at position 1")
        #expect(failure("{{ 'x' | regex_match('\\\\q') }}") == "invalid regular expression '\\\\q': bad escape \\q at position 0")
        #expect(failure("{{ 'x' | regex_match('" + String(repeating: "(", count: 200) + "') }}")?.hasPrefix("invalid regular expression") == true)
    }

    // MARK: 2. The format mini-languages, never printf

    @Test func formatSpecificationsAreParsedNotHandedToPrintf() {
        #expect(evaluate("{{ '{:n}'.format(5) }}") == .success(.string("5")))
        #expect(failure("{{ '{:S}'.format(5) }}") == "Unknown format code 'S' for object of type 'int'")
        #expect(failure("{{ '{:m}'.format(5.5) }}") == "Unknown format code 'm' for object of type 'float'")
        #expect(failure("{{ '{:d}'.format('x') }}") == "Unknown format code 'd' for object of type 'str'")
        #expect(failure("{{ '{:c}'.format(99999999) }}") == "%c arg not in range(0x110000)")
        #expect(failure("{{ '%n' % 5 }}") == "unsupported format character 'n'")
        #expect(failure("{{ '{:.}'.format(5.5) }}") == "Format specifier missing precision")
        let cases: [(String, String)] = [
            ("{{ '{:.2}'.format(10.0) }}|{{ '{:.3}'.format(1.0) }}|{{ '{:.1%}'.format(0.123) }}", "1e+01|1.0|12.3%"),
            ("{{ '{:08.2f}'.format(-3.5) }}|{{ '{:,}'.format(1234567) }}|{{ '{:_x}'.format(1234567) }}|{{ '{:#b}'.format(5) }}",
             "-0003.50|1,234,567|12_d687|0b101"),
            ("{{ '{:=+6d}'.format(5) }}|{{ '{:<05}'.format(3) }}|{{ '{:z.1f}'.format(-0.01) }}|{{ '{:^7}'.format('ab') }}|",
             "+    5|30000|0.0|  ab   |"),
            ("{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{x}'.format(x=3) }}|{{ '{!r}'.format('a') }}|{{ '{:{w}}'.format(5, w=4) }}", "aba|3|'a'|   5"),
            ("{{ '%o' % -5 }}|{{ '%x' % -255 }}|{{ '%05d' % -42 }}|{{ '%-5d|' % 42 }}|{{ '%c' % 65 }}|{{ '%(a)s-%(b)d' % {'a': 'x', 'b': 2} }}",
             "-5|-ff|-0042|42   ||A|x-2"),
        ]
        for (template, expected) in cases {
            #expect(evaluate(template) == .success(.string(expected)), "\(template)")
        }
    }

    // MARK: 3. Integers at the edges

    @Test func integersNearTheLimitsNeverTrap() {
        let edges = ["sensor.max": "9223372036854775807", "sensor.min": "-9223372036854775808"]
        let max = "(states('sensor.max') | int)", min = "(states('sensor.min') | int)"
        #expect(failure("{{ range(\(min), \(max)) | list }}", edges)?.hasSuffix("numbers; the limit is 65536") == true)
        #expect(evaluate("{{ range(\(max), \(min), \(min)) | list }}", edges) == .success(.list([.int(.max), .int(-1)])))
        #expect(evaluate("{{ range(0, 10, \(min)) | list }}", edges) == .success(.list([])))
        #expect(evaluate("{{ range(\(min), \(min) + 2) | list }}", edges) == .success(.list([.int(.min), .int(.min + 1)])))
        #expect(evaluate("{{ 'abc' | truncate(\(max)) }}", edges) == .success(.string("abc")))
        #expect(evaluate("{{ 'abc' | truncate(5, leeway=\(max)) }}", edges) == .success(.string("abc")))
        #expect(evaluate("{{ 'abc' | center(\(min)) }}", edges) == .success(.string("abc")))
        #expect(evaluate("{{ '5'.zfill(\(min)) }}", edges) == .success(.string("5")))
        #expect(evaluate("{{ [1, 2, 3] | batch(\(max)) | list }}", edges) == .success(.list([.list([.int(1), .int(2), .int(3)])])))
        #expect(failure("{{ [1, 2, 3] | batch(\(max), 0) | list }}", edges)
                == "batch(9223372036854775807) filled up would make 9223372036854775807 characters; the limit is 65536")
    }

    // MARK: 10, 11. Bounds on what is built and how long it takes

    @Test func textAndListsAreBoundedBeforeTheyAreBuilt() {
        #expect(failure("{{ 'ab' * 30000 ~ 'ab' * 30000 }}")?.hasSuffix("the limit is 65536") == true)
        #expect(failure("{{ 'ab' * 30000 + 'ab' * 30000 }}")?.hasSuffix("the limit is 65536") == true)
        #expect(failure("{{ range(65536) | map('string') | join(',') }}") == "join of 65536 texts would make 382105 characters; the limit is 65536")
        #expect(failure("{{ ','.join(range(65536) | map('string')) }}")?.hasSuffix("the limit is 65536") == true)
        #expect(failure("{{ ('a b ' * 20000) | slugify(separator='x' * 1000) }}")?.hasSuffix("the limit is 65536") == true)
    }

    @Test func aRenderHasABudgetOfSteps() {
        let quadratic = "{% set ns = namespace(s='') %}{% for i in range(60000) %}{% set ns.s = ns.s ~ 'x' %}{% endfor %}"
        let message = failure(quadratic) ?? ""
        #expect(message.hasPrefix("the template did too much work (over 1000000 steps") || message.hasPrefix("the template ran for over"), "\(message)")
        // Macros that call each other three times, twelve deep: 3^12 calls.
        var macros = "{% macro m0() %}x{% endmacro %}"
        for level in 1...12 {
            macros += "{% macro m\(level)() %}{{ m\(level - 1)() }}{{ m\(level - 1)() }}{{ m\(level - 1)() }}{% endmacro %}"
        }
        #expect(failure(macros + "{{ m12() | length }}") != nil)
        #expect(evaluate("{{ range(20000) | map('string') | unique | list | length }}") == .success(.int(20000)), "unique is linear")
        #expect(evaluate("{{ [1, 1.0, true, 'a', 'A', 2] | unique | list }}") == .success(.list([.int(1), .string("a"), .int(2)])))
    }

    @Test func anOrdinaryTemplateStaysFarBelowTheBudget() {
        let states = Dictionary(uniqueKeysWithValues: (0..<2000).map { ("sensor.s\($0)", "\($0)") })
        #expect(evaluate("{{ states.sensor | map(attribute='state') | map('int') | select('gt', 1000) | list | length }}", states)
                == .success(.int(999)))
    }

    // MARK: The attack on round 2 (an independent tester's findings)

    @Test func sharedOrNestedValuesAreNeverExpandedPastTheBound() {
        let cases = [
            "{{ (['a' * 65000] * 65536) | string | length }}",
            "{{ dict(a=['a' * 65000] * 65536) | string | length }}",
            "{{ (['a' * 65000] * 8000) | to_json | length }}",
            "{% set ns = namespace(s=[1]) %}{% for i in range(30) %}{% set ns.s = [ns.s, ns.s] %}{% endfor %}{{ ns.s | string | length }}",
            "{% set ns = namespace(s=[1]) %}{% for i in range(40) %}{% set ns.s = [ns.s, ns.s] %}{% endfor %}{{ ns.s | flatten | length }}",
            "{{ ['a' * 65000] * 100 }}",
            "{{ ('a' * 65000) | list | string }}",
        ]
        for template in cases {
            let start = ContinuousClock.now
            #expect(failure(template) != nil, "\(template)")
            #expect(ContinuousClock.now - start < .seconds(5), "\(template) took \(ContinuousClock.now - start)")
        }
    }

    @Test func textThatGrowsIsBoundedBeforeOrAsItIsMade() {
        #expect(failure("{{ ('a\\n' * 30000) | indent(60000) | length }}")?.hasPrefix("indent would make") == true)
        #expect(failure("{{ ('ß' * 65000) | upper }}") == "the text made would make 130000 characters; the limit is 65536")
        #expect(failure("{{ ('a' * 65000) | base64_encode }}")?.hasSuffix("the limit is 65536") == true)
    }

    @Test func workThatIsNotStepsIsChargedAsSteps() {
        for template in ["{{ ('a' * 65000).replace('a' * 32768 ~ 'b', 'c') | length }}", "{{ ('a' * 65000).count('a' * 32768 ~ 'b') }}",
                         "{{ ('a' * 65000).split('a' * 32768 ~ 'b') | length }}",
                         "{{ range(65536) | select('in', range(65536) | list) | list | length }}",
                         "{{ ('a' * 60000) is match('()' * 20000 ~ '(?:(?=a)a)*$') }}"] {
            let start = ContinuousClock.now
            #expect(failure(template) != nil, "\(template)")
            #expect(ContinuousClock.now - start < .seconds(5), "\(template) took \(ContinuousClock.now - start)")
        }
    }

    @Test func theLowFindingsGivePythonsAnswers() {
        #expect(evaluate("{{ '{:b}'.format(-9223372036854775808) }}").map(\.text) == .success("-1" + String(repeating: "0", count: 63)))
        #expect(evaluate("{{ range(0, 10, -9223372036854775808) | list }}") == .success(.list([])))
        #expect(failure("{{ 0 ** -1 }}") == "0.0 cannot be raised to a negative power")
        #expect(evaluate("{{ (1e400 // 1) | string }}") == .success(.string("nan")))
    }

    @Test func aSecretUsedAsAnActivityKeyIsNotPrinted() throws {
        let folder = try ConfigFolder(["livebridge.yaml": """
            backends:
              aivi: { type: aivi, token: t }
            activities:
              ? !secret name
              : template: progress
            """, "secrets.yaml": "name: SEKRIT4\n"])
        guard case .failure(let errors) = RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) else {
            Issue.record("loaded"); return
        }
        #expect(!errors.description.contains("SEKRIT4"), "\(errors)")
    }

    // MARK: 4. suggest writes nothing of Home Assistant's that can be more than text

    @Test func hostileNamesAreasAndUnitsCannotAddToTheProposal() throws {
        let hostileName = "Washer'}} {{ states.lock.front_door.state }}\n  pwned: \"x\"\u{2028}#"
        let hostileArea = "Kitchen\n  pwned:\n    active_when: \"{{ true }}\""
        let appliances = [
            Appliance(kind: .washer, id: "washer\nx: 1", name: hostileName, running: .states("sensor.washer_status", ["running", "a'}}{{ 1 }}"]),
                      progress: "sensor.washer_progress", remaining: .amount("sensor.washer_left", unit: "min}} {{ now() }}"), area: hostileArea),
            Appliance(kind: .dryer, id: "dryer", name: "Dryer", running: .power("sensor.dryer_power\n", watts: 5)),
            Appliance(kind: .timer, id: "t", name: "{% for i in range(9) %}", running: .states("timer.t", ["active"]), entity: "timer.t"),
        ]
        let proposal = RulesProposal(connection: .url("http://ha.local:8123"), appliances: appliances, source: "a\ntest")
        #expect(proposal.appliances.map(\.id) == ["washer_x_1", "t"] && proposal.leftOut == 1)
        let folder = try ConfigFolder(["livebridge.yaml": proposal.text, "secrets.yaml": "ha_token: t\naivi_token: a\n"])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        #expect(rules.activities.map(\.id).sorted() == ["t", "washer_x_1"])
        #expect(!proposal.text.contains("\n  pwned:") && !proposal.text.contains("\n    pwned:"), "no key of Home Assistant's making")
        #expect(!proposal.text.contains("{{ states.lock") && !proposal.text.contains("{{ now()") && !proposal.text.contains("{{ 1 }}"))
        #expect(!proposal.text.contains("{% for"))
        let washer = try #require(rules.activities.first { $0.id == "washer_x_1" })
        #expect(washer.entityIDs == ["sensor.washer_status", "sensor.washer_progress", "sensor.washer_left"])
    }
}
