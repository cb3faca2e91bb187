import Foundation
import HomeAssistant
import LiveActivity
import Rules
import Testing
import Templates
import JSON

/// Every activity the README and config/ show, end to end through the renderer: its start and an update render
/// cleanly while its devices run, and its end renders from `on_end` once they stopped — with no field left out and no
/// fallback end. What a user copies must not log a problem at every normal end.
struct ExampleRenderTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The example states, and the same devices stopped (what the entities read once an activity ended).
    static func states(running: Bool) throws -> [String: EntityState] {
        var states = try StatesFile.load(path: repository.appendingPathComponent("config/states.example.json").path)
        guard !running else { return states }
        for (id, state) in states {
            var stopped = state
            switch id {
            case "timer.laundry": stopped = EntityState(entityID: id, state: "idle", attributes: ["duration": "1:30:00", "remaining": "1:30:00"], lastChanged: 0)
            case "binary_sensor.ev_charging": stopped.state = "off"
            case "vacuum.robo": stopped.state = "docked"
            case let id where id.hasSuffix("_status"): stopped = EntityState(entityID: id, state: "idle", lastChanged: 0)
            default: continue
            }
            states[id] = stopped
        }
        return states
    }

    /// The rules snippets of the README and docs/rules.md (the taste and the worked mappings), as one file's activities.
    static func readmeActivities() throws -> String {
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8) + "\n"
            + String(contentsOf: repository.appendingPathComponent("docs/rules.md"), encoding: .utf8)
        var blocks: [String] = []
        var current: [String]?
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "```yaml" { current = []; continue }
            if line == "```", let block = current {
                current = nil
                let text = block.joined(separator: "\n")
                if text.hasPrefix("activities:\n") { blocks.append(String(text.dropFirst("activities:\n".count))) } else if text.contains("\n  active_when:") {
                    blocks.append(block.map { "  " + $0 }.joined(separator: "\n"))
                }
                continue
            }
            current?.append(String(line))
        }
        // The same id in two snippets (the taste and a mapping): the second is numbered.
        var seen: Set<String> = []
        let lines = blocks.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), line.hasSuffix(":") else { return String(line) }
            var id = String(line.dropFirst(2).dropLast())
            while seen.contains(id) { id += "_2" }
            seen.insert(id)
            return "  " + id + ":"
        }
        return lines.joined(separator: "\n")
    }

    func check(_ rules: RulesFile, source: String) throws {
        let running = EvaluationContext(states: try Self.states(running: true), now: 1_795_348_800)  // 2026-11-22T12:00:00Z
        let stopped = EvaluationContext(states: try Self.states(running: false), now: 1_795_349_400)
        #expect(!rules.activities.isEmpty)
        for rule in rules.activities {
            #expect((try? ActivityRenderer.isActive(rule, in: running).get()) == true, "\(source): \(rule.id) is active with the example states")
            #expect((try? ActivityRenderer.isActive(rule, in: stopped).get()) == false, "\(source): \(rule.id) is not active once stopped")
            for target in rule.targets {
                for phase in [PushKind.start, .update] {
                    var notes: [PayloadIssue] = []
                    let result = ActivityRenderer.render(rule, for: target, phase: phase, in: running, notes: &notes)
                    #expect((try? result.get()) != nil, "\(source): \(rule.id) at \(target.name) \(phase): \(result)")
                    #expect(notes.isEmpty, "\(source): \(rule.id) at \(target.name) \(phase) left out: \(notes)")
                }
                var notes: [PayloadIssue] = []
                let end = ActivityRenderer.render(rule, for: target, phase: .end, in: stopped, notes: &notes)
                #expect((try? end.get()) != nil, "\(source): \(rule.id) at \(target.name): the end does not render from on_end once stopped: \(end)")
                #expect(notes.isEmpty, "\(source): \(rule.id) at \(target.name) end left out: \(notes)")
            }
        }
    }

    @Test func theExampleRulesFileRendersStartUpdateAndEnd() throws {
        let folder = try ConfigFolder([
            "livebridge.yaml": try String(contentsOf: Self.repository.appendingPathComponent("config/livebridge.example.yaml"), encoding: .utf8),
            "secrets.yaml": try String(contentsOf: Self.repository.appendingPathComponent("config/secrets.example.yaml"), encoding: .utf8),
        ])
        try check(try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get(), source: "config/livebridge.example.yaml")
    }

    @Test func theReadmesRulesRenderStartUpdateAndEnd() throws {
        let activities = try Self.readmeActivities()
        #expect(activities.contains("laundry:") && activities.contains("ev:"))
        let text = "backends: { aivi: { type: aivi, token: t }, ward: { type: pushward, token: t }, smith: { type: activitysmith, token: t } }\ndefaults: { backend: aivi }\nactivities:\n" + activities + "\n"
        let rules = try RulesLoader.load(text: text, file: "README.md").mapError { errors in errors }.get()
        try check(rules, source: "README.md")
        // The countdown's end: "Done" written without a formatter replaces the time_until countdown.
        let laundry = try #require(rules.activities.first { $0.id == "laundry" })
        var notes: [PayloadIssue] = []
        let end = try ActivityRenderer.render(laundry, for: laundry.targets[0], phase: .end,
                                              in: EvaluationContext(states: try Self.states(running: false), now: 1_795_349_400), notes: &notes).get()
        #expect(end.body["content"]?["header_right"] == ["value": "Done", "text_color": "green"])
        // While it runs, the bar is the share of the time left, from now().
        let running = try ActivityRenderer.render(laundry, for: laundry.targets[0], phase: .update,
                                                  in: EvaluationContext(states: try Self.states(running: true), now: 1_795_348_800), notes: &notes).get()
        #expect(running.body["content"]?["progress"]?["value"]?.doubleValue == 2.0 / 3.0, "an hour of an hour and a half left at 12:00")
        #expect(laundry.readsTime, "evaluated again each minute")
    }
}
