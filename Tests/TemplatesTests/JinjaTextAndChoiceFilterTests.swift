import Testing
@testable import Templates

/// Jinja's `escape` (`e`, `forceescape`), `safe`, `items` and `filesizeformat`, and Home Assistant's `random`, held to
/// what Home Assistant 2026.11 (Jinja 3.1.6, markupsafe 3.0.4) renders for the same source; and calls of functions
/// LiveBridge does not have, which say so.
struct JinjaTextAndChoiceFilterTests {
    let context = EvaluationContext(states: [:], now: 1_795_348_800, timeZone: .utc)

    func rendered(_ source: String) throws -> String {
        try Template(source).evaluate(in: context).text
    }

    @Test(arguments: [
        ("{{ '<a href=\"x\">&\\'</a>' | e }}", "&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt;"),
        ("{{ 5 | e }}", "5"),
        ("{{ none | escape }}", "None"),
        ("{{ [\"<a>\", 1] | forceescape }}", "[&#39;&lt;a&gt;&#39;, 1]"),
        ("{{ 'plain text' | e }}", "plain text"),
        ("{{ 'Grüße <3' | e }}", "Grüße &lt;3"),
        ("{{ '<b>' | safe }}", "<b>"),
        ("{{ 5 | safe }}", "5"),
        ("{{ ('<' | e) ~ '<' }}", "&lt;<"),
        ("{% for k, v in {'a': 1, 'b': 2} | items %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;"),
        ("{{ {'b': 1, 'a': 2} | items | map('first') | join(',') }}", "b,a"),
        ("{{ 1 | filesizeformat }}", "1 Byte"),
        ("{{ 0 | filesizeformat }}", "0 Bytes"),
        ("{{ 999 | filesizeformat }}", "999 Bytes"),
        ("{{ 1.5 | filesizeformat }}", "1 Bytes"),
        ("{{ -5 | filesizeformat }}", "-5 Bytes"),
        ("{{ -0.5 | filesizeformat }}", "0 Bytes"),
        ("{{ 1000 | filesizeformat }}", "1.0 kB"),
        ("{{ 1234567 | filesizeformat }}", "1.2 MB"),
        ("{{ 999999 | filesizeformat }}", "1000.0 kB"),
        ("{{ 1234567 | filesizeformat(true) }}", "1.2 MiB"),
        ("{{ '2048' | filesizeformat(binary=true) }}", "2.0 KiB"),
        ("{{ 1e30 | filesizeformat }}", "1000000.0 YB"),
    ])
    func rendersAsHomeAssistant(source: String, expected: String) throws {
        #expect(try rendered(source) == expected)
    }

    @Test(arguments: [
        ("{{ none | items | list }}", "items can only get item pairs from a mapping"),
        ("{{ 'x' | filesizeformat }}", "filesizeformat needs a number"),
        ("{{ [] | random }}", "random of an empty sequence"),
        ("{{ 5 | random }}", "random needs a list or text"),
    ])
    func refusesAsHomeAssistantDoes(source: String, reason: String) {
        #expect {
            _ = try rendered(source)
        } throws: { error in
            (error as? EvaluationError)?.message.hasPrefix(reason) == true
        }
    }

    /// random chooses one of the items, and over many renders every one of them (Home Assistant's is random.choice,
    /// chosen anew each render).
    @Test func randomChoosesEachItemOverManyRenders() throws {
        let template = try Template("{{ ['a', 'b', 'c'] | random }}")
        var seen: Set<String> = []
        for _ in 0..<300 { seen.insert(try template.evaluate(in: context).text) }
        #expect(seen == ["a", "b", "c"])
        let letter = try rendered("{{ 'xyz' | random }}")
        #expect(["x", "y", "z"].contains(letter))
    }

    /// A call of a name that is no function says so, with the closest function when one is near; Home Assistant's
    /// entity_name reads its registries and is left to it.
    @Test(arguments: [
        ("{{ nosuchfn(1) }}", "unknown function \"nosuchfn\"; templates can call states,"),
        ("{{ stats('sensor.a') }}", "unknown function \"stats\"; did you mean states?"),
        ("{{ joiner(', ') }}", "unknown function \"joiner\""),
        ("{% set f = 1 %}{{ f(2) }}", "unknown function \"f\""),
    ])
    func aCallOfNoFunctionSaysSo(source: String, message: String) {
        #expect {
            _ = try Template(source)
        } throws: { error in
            guard let error = error as? Template.CompileError else { return false }
            return error.message.hasPrefix(message) && error.homeAssistantOnly == nil
        }
    }

    @Test(arguments: ["{{ entity_name('sensor.x') }}", "{{ 'sensor.x' | entity_name }}", "{{ label_description('l') }}"])
    func registryNamesAreRenderedByHomeAssistant(source: String) throws {
        let template = try Template(source)
        #expect(template.renderedByHomeAssistant?.contains("reads Home Assistant's registries") == true)
    }
}

/// Python compares a size with the exact whole number 1000**k: 1e24 is a zettabyte short of a yottabyte.
struct FileSizeAtTheTopTests {
    let context = EvaluationContext(states: [:], now: 1_795_348_800, timeZone: .utc)

    @Test(arguments: [
        ("{{ 1e24 | filesizeformat }}", "1000.0 ZB"), ("{{ 999999999999999999999999 | filesizeformat }}", "1000.0 ZB"),
        ("{{ 1e27 | filesizeformat }}", "1000.0 YB"), ("{{ 1e23 | filesizeformat }}", "100.0 ZB"), ("{{ 1e21 | filesizeformat }}", "1.0 ZB"),
    ])
    func answersAsJinja(source: String, expected: String) throws {
        #expect(try Template(source).evaluate(in: context).text == expected)
    }
}
