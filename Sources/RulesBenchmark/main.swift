import Foundation
import HomeAssistant
import LiveActivity
import Rules
import Templates
import JSON

// make bench-rules: 1,000 activities against 100,000 state changes, in a release build.
// Each change re-evaluates only the activities that read the changed entity, as the daemon does.

let activityCount = 1_000
let entityCount = 100
let changeCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000

func rulesText() -> String {
    var text = "backends:\n  aivi: { type: aivi, token: t }\nactivities:\n"
    for n in 0..<activityCount {
        let a = "sensor.e\(n % entityCount)", b = "sensor.e\((n * 7 + 3) % entityCount)"
        text += """
              a\(n):
                active_when: "{{ is_state('\(a)', 'running') or states('\(b)') | float(0) > 10 }}"
                template: progress
                icon: washer
                progress: { style: simple, value: "{{ [1, states('\(a)') | float(0) / 100] | min }}", color: blue }
                header_left: { value: "{{ 'Running' if is_state('\(a)', 'running') else 'Idle' }}", text_color: green }
                header_right: "{{ states('\(b)') | int(0) }} min"
                footer_left: "{{ state_attr('\(a)', 'program') | default('Program') }}"
                footer_right: "{{ states('\(a)') | float(0) | round }}%"
                compact_value: "{{ (states('\(b)') | float(0) * 60) | int }}s"

            """
    }
    return text
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-bench-\(getpid())").path
try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
try! rulesText().write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)

let clock = ContinuousClock()
let loadStart = clock.now
let rules = try! RulesLoader.load(file: folder + "/rules.yaml", environment: [:]).get()
let loadTime = clock.now - loadStart

var readers: [String: [ActivityRule]] = [:]
for rule in rules.activities { for id in rule.entityIDs { readers[id, default: []].append(rule) } }

var context = EvaluationContext(states: [:], now: 1_795_348_800, timeZone: .utc)
for n in 0..<entityCount {
    context.states["sensor.e\(n)"] = EntityState(entityID: "sensor.e\(n)", state: "5", attributes: ["program": "Cotton"], lastChanged: 0)
}

var renders = 0, activeChecks = 0, failures = 0, bytes = 0
let start = clock.now
for change in 0..<changeCount {
    let id = "sensor.e\(change % entityCount)"
    context.states[id]!.state = change % 3 == 0 ? "running" : String(change % 100)
    context.now += 0.01
    for rule in readers[id] ?? [] {
        activeChecks += 1
        guard case .success(true) = ActivityRenderer.isActive(rule, in: context) else { continue }
        var notes: [PayloadIssue] = []
        switch ActivityRenderer.render(rule, for: rule.targets[0], phase: .update, in: context, notes: &notes) {
        case .success(let request): renders += 1; bytes += request.bodyBytes.count
        case .failure: failures += 1
        }
    }
}
let elapsed = clock.now - start

// Field evaluation alone: every payload-field template of every rule, against the final states.
var evaluations = 0
var sink = 0
let fieldStart = clock.now
for _ in 0..<20 {
    for rule in rules.activities {
        for template in rule.fieldTemplates {
            if case .string(let s)? = try? template.evaluate(in: context) { sink &+= s.utf8.count }
            evaluations += 1
        }
    }
}
let fieldElapsed = clock.now - fieldStart
let fieldSeconds = Double(fieldElapsed.components.seconds) + Double(fieldElapsed.components.attoseconds) / 1e18
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print("rules benchmark (release): \(activityCount) activities, \(entityCount) entities, \(changeCount) state changes")
print(String(format: "  load: %.1f ms for %d activities", Double(loadTime.components.attoseconds) / 1e15 + Double(loadTime.components.seconds) * 1000, rules.activities.count))
print("  activity evaluations: \(activeChecks), renders: \(renders), invalid payloads: \(failures), body bytes: \(bytes)")
print(String(format: "  field evaluation: %.0f ns per template (%d evaluations)", fieldSeconds * 1e9 / Double(evaluations), evaluations))
print(String(format: "  change loop: %.2f s; %.0f ns per activity render (all fields evaluated, validated, encoded), %.0f ns per state change",
             seconds, seconds * 1e9 / Double(max(renders, 1)), seconds * 1e9 / Double(changeCount)))

// Statement-heavy templates, each compiled once and evaluated many times against the final states.
let heavy: [(String, String)] = [
    ("if/elif/else", "{% if is_state('sensor.e1', 'running') %}Running {{ states('sensor.e2') | int(0) }}%{% elif states('sensor.e2') | float(0) > 50 %}Almost{% else %}Idle{% endif %}"),
    ("for over range(10)", "{% for i in range(10) %}{{ loop.index }}{{ ',' if not loop.last }}{% endfor %}"),
    ("namespace over states.sensor (100)", "{% set ns = namespace(n=0) %}{% for s in states.sensor %}{% if s.state | float(0) > 10 %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.n }}"),
    ("selectattr over states.sensor (100)", "{{ states.sensor | selectattr('state', 'eq', 'running') | map(attribute='entity_id') | list | count }}"),
    ("format and regex_replace", "{{ '{:.1f}'.format(states('sensor.e3') | float(0)) }} {{ states('sensor.e4') | regex_replace('[0-9]', '#') }}"),
    ("strptime and timestamp_custom", "{{ as_timestamp(strptime('2026-11-22 13:30', '%Y-%m-%d %H:%M')) | timestamp_custom('%H:%M') }}"),
]
print("  statement-heavy templates (ns per evaluation):")
for (name, source) in heavy {
    let template = try! Template(source)
    let rounds = 2_000
    let t0 = clock.now
    for _ in 0..<rounds {
        if case .string(let s)? = try? template.evaluate(in: context) { sink &+= s.utf8.count }
    }
    let t = clock.now - t0
    let ns = (Double(t.components.seconds) * 1e9 + Double(t.components.attoseconds) / 1e9) / Double(rounds)
    print("    " + name.padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%9.0f", ns))
}
if sink == 42 { print("") }
try? FileManager.default.removeItem(atPath: folder)
