
import Testing
@testable import Templates

/// Templates nested or chained beyond what evaluation can take are refused at load, with a position; up to the
/// limit they evaluate, even on a thread with a small stack.
struct TemplateDepthTests {
    func compileError(_ source: String) -> Template.CompileError? {
        do { _ = try Template(source); return nil } catch { return error }
    }

    @Test func aThousandNestedBracketsAreRefusedWhereTheyPassTheLimit() throws {
        let error = try #require(compileError("{{ " + String(repeating: "(", count: 1000) + "1" + String(repeating: ")", count: 1000) + " }}"))
        #expect(error.message == "expression nests deeper than 100 levels")
        #expect(error.offset == 3 + 100, "at the bracket that passes the limit")
    }

    @Test func aChainOfAThousandAdditionsIsRefused() throws {
        let error = try #require(compileError("{{ 1" + String(repeating: " + 1", count: 1000) + " }}"))
        #expect(error.message == "expression chains more than 100 operators")
    }

    @Test(arguments: ["{{ " + String(repeating: "-", count: 5000) + "1 }}", "{{ " + String(repeating: "not ", count: 5000) + "1 }}",
                      "{{ x" + String(repeating: ".a", count: 5000) + " }}", "{{ 1" + String(repeating: " | abs", count: 5000) + " }}",
                      "{{ " + String(repeating: "[", count: 5000) + " }}", "{{ " + String(repeating: "min(", count: 5000) + " }}",
                      "{{ " + String(repeating: "-", count: 60) + "(1" + String(repeating: " + 1", count: 60) + ") }}"])
    func hostileShapesAreRefusedNotCrashed(source: String) {
        #expect(compileError(source) != nil)
    }

    @Test func signsAroundAChainCountTogether() throws {
        let error = try #require(compileError("{{ " + String(repeating: "-", count: 60) + "(1" + String(repeating: " + 1", count: 60) + ") }}"))
        #expect(error.message == "expression is 121 levels deep; the limit is 100 (a chain such as a + b + c counts a level per operator)")
    }

    @Test func nestingUpToTheLimitEvaluatesOnAPoolThread() async throws {
        let deep = try Template("{{ " + String(repeating: "(", count: 90) + "1" + String(repeating: " + 1)", count: 90) + " }}")
        let value = await Task.detached { try? deep.evaluate(in: EvaluationContext(states: [:], now: 0, timeZone: .utc)) }.value
        #expect(value == .int(91))
        let chained = try Template("{{ 0" + String(repeating: " + 1", count: 99) + " }}")
        #expect(try chained.evaluate(in: EvaluationContext(states: [:], now: 0, timeZone: .utc)) == .int(99))
    }

    @Test func statementsNestAtMost100Deep() throws {
        let error = try #require(compileError(String(repeating: "{% if true %}", count: 5000) + String(repeating: "{% endif %}", count: 5000)))
        #expect(error.message == "statements nest deeper than 100 levels")
        #expect(error.offset == 13 * 100 + 2)
    }

    func rendered(_ source: String) throws -> String {
        try Template(source).evaluate(in: EvaluationContext(states: [:], now: 0, timeZone: .utc)).text
    }

    /// A namespace keeps a value from one loop pass to the next: wrapped a level deeper each pass, however it is
    /// wrapped, it is refused at the bound (freed at 60,000 levels deep, it overflowed the stack).
    @Test(arguments: ["dict(a=ns.x)", "namespace(a=ns.x)", "ns.x|batch(1)|list", "ns.x|slice(1)|list",
                      "dict(a=ns.x).items()|list", "[ns.x]", "{'a': ns.x}", "[[[[ns.x]]]]"])
    func aValueWrappedDeeperEachPassIsRefusedAtTheBound(_ wrap: String) throws {
        let error = #expect(throws: EvaluationError.self) {
            try rendered("{% set ns = namespace(x=[1]) %}{% for i in range(60000) %}{% set ns.x = \(wrap) %}{% endfor %}{{ 1 }}")
        }
        #expect(error?.message.hasSuffix("would nest lists and dicts more than 128 deep") == true, "\(String(describing: error))")
    }

    @Test func aNamespaceHoldsValuesUpToTheBoundAndLongListsOfDicts() throws {
        // The namespace is one level: 127 dicts below it reach the bound, 128 pass it.
        #expect(try rendered("{% set ns = namespace(x=1) %}{% for i in range(127) %}{% set ns.x = dict(a=ns.x) %}{% endfor %}{{ ns.x|string|length }}") == "890")
        #expect(throws: EvaluationError.self) {
            try rendered("{% set ns = namespace(x=1) %}{% for i in range(128) %}{% set ns.x = dict(a=ns.x) %}{% endfor %}{{ 1 }}")
        }
        // Each pass walks the dicts already held, and a list of dicts built up in a loop is still taken (400: the
        // template's own copying is quadratic, and a sanitizer's build must stay inside the render's 2 s).
        #expect(try rendered("{% set ns = namespace(items=[]) %}{% for i in range(400) %}{% set ns.items = ns.items + [{'n': i, 'l': [i]}] %}{% endfor %}{{ ns.items|count }}") == "400")
    }

    @Test func nestedLoopsOverLargeRangesStopWithAReason() throws {
        let template = try Template("{% for i in range(60000) %}{% for j in range(60000) %}{% endfor %}{% endfor %}")
        let error = #expect(throws: EvaluationError.self) {
            try template.evaluate(in: EvaluationContext(states: [:], now: 0, timeZone: .utc))
        }
        // Steps bound it; on a loaded machine (a debug build under a sanitizer) the time backstop may come first.
        let message = error?.message ?? ""
        #expect(message.hasPrefix("the template did too much work (over 1000000 steps") || message.hasPrefix("the template ran for over 2.0 seconds"),
                "\(message)")
    }
}
