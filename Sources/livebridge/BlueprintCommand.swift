import FoundationEssentials
import Glibc
import JSON
import Preview
import Rules
import Templates
import LiveActivity
import HomeAssistant

/// `livebridge blueprint lint [--rules RULES.yaml] FILE...`: every error with line:column; exit 1 on any.
/// `livebridge blueprint test BLUEPRINT.yaml --input NAME=VALUE…`: the events one run fires, checked and drawn.
enum BlueprintCommand {
    static let help = """
        usage: livebridge blueprint lint [--rules RULES.yaml] FILE...
               livebridge blueprint test BLUEPRINT.yaml [--input NAME=VALUE]... [--trigger ID]
                                         (--states STATES.json | --url URL --token-file FILE) [--at ISO_TIME]
                                         [--rules RULES.yaml] [--out FILE.svg|FILE.html]

        lint checks Home Assistant blueprints that fire LiveBridge's event: the event type it listens to
        (livebridge_activity, or the rules' events.type), the actions it takes, the backends the rules declare
        (with --rules), and each fixed payload against its template.

        test instantiates the blueprint with the inputs (YAML values: cleaning, [cleaning, returning], {seconds: 2};
        defaults for the rest), runs it once for the trigger with id ID (default: the first) — its variables,
        conditions and actions (choose, if, variables, condition, event) — and checks each event it fires as
        LiveBridge would take it: the request it becomes, or every problem with it. Templates render through Home
        Assistant's render_template on its live states with --url, through LiveBridge's engine on STATES.json
        without. Without --rules, each backend named is taken as an Aivi backend. --out draws the last event's payload
        as the phone shows it.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        switch arguments.first {
        case "lint": return try lint(Array(arguments.dropFirst()))
        case "test": return try await test(Array(arguments.dropFirst()))
        default: throw UsageError(help)
        }
    }

    static func lint(_ arguments: [String]) throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["rules"])
        guard !args.positional.isEmpty else { throw UsageError("name at least one blueprint file") }
        var eventType = "livebridge_activity"
        var backends: [String]?
        if let path = args["rules"] {
            guard let rules = CommandSupport.rules(path) else { return 1 }
            eventType = rules.eventType
            backends = rules.backends.keys.sorted()
        }
        var failed = false
        for file in args.positional {
            let errors = BlueprintLinter.lint(file: file, eventType: eventType, backends: backends)
            if errors.isEmpty {
                print("\(file): OK")
            } else {
                failed = true
                for error in errors { standardError(error.description) }
            }
        }
        return failed ? 1 : 0
    }

    static func test(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["input", "trigger", "states", "url", "token-file", "at", "rules", "out"], repeating: ["input"])
        guard args.positional.count == 1, let file = args.positional.first else { throw UsageError("name one blueprint file\n\n\(help)") }
        var inputs: [String: String] = [:]
        for pair in args.all("input") {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else { throw UsageError("--input takes NAME=VALUE, not \"\(pair)\"") }
            inputs[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        if let out = args["out"], !(out.hasSuffix(".svg") || out.hasSuffix(".html")) { throw UsageError("--out takes FILE.svg or FILE.html") }
        let target = try HomeAssistantTarget.from(args)
        guard args["states"] != nil || target != nil else { throw UsageError("give --states STATES.json, or --url and --token-file for the live states") }
        var rules: RulesFile?
        if let path = args["rules"] {
            guard let loaded = CommandSupport.rules(path) else { return 1 }
            rules = loaded
        }
        let instance: BlueprintInstance
        switch BlueprintInstance.instantiate(file: file, inputs: inputs) {
        case .failure(let errors):
            for error in errors.errors { standardError(error.description) }
            return 1
        case .success(let made): instance = made
        }
        let now = try CommandSupport.time(args)
        let (states, order) = if let path = args["states"] { try StatesFile.loadInOrder(path: path) } else { try await target!.states(command: "blueprint test") }
        let online = target != nil && args["states"] == nil
        let outcome: BlueprintRun.Outcome
        do {
            if let target, online {
                outcome = try await target.withConnection(command: "blueprint test") { connection in
                    let renderer = HomeAssistantBlueprintRenderer(connection: connection, url: target.url)
                    return try await BlueprintRun(instance, renderer: renderer, states: states).run(trigger: args["trigger"])
                }
            } else {
                let renderer = LocalBlueprintRenderer(context: EvaluationContext(states: states, order: order, now: now))
                outcome = try await BlueprintRun(instance, renderer: renderer, states: states).run(trigger: args["trigger"])
            }
        } catch {
            standardError("livebridge blueprint test: \(file): \(error)")
            return 1
        }
        let trigger = args["trigger"].flatMap { id in instance.triggers.first { $0.id == id } } ?? instance.triggers[0]
        print("\(instance.name) (\(file)), trigger \"\(trigger.id)\" (\(trigger.kind)\(trigger.entityID.map { " of " + $0 } ?? "")), "
              + (online ? "rendered by Home Assistant" : "rendered offline"))
        for note in outcome.notes { print("  note: \(note)") }
        if let stopped = outcome.stopped { print("  \(stopped)") }
        if outcome.fired.isEmpty, outcome.stopped == nil { print("  fires no event") }
        var failed = false
        var drawn: (title: String, payload: JSONValue)?
        for fired in outcome.fired {
            let eventType = rules?.eventType ?? "livebridge_activity"
            guard fired.eventType == eventType else {
                print("\(fired.path): fires \"\(fired.eventType)\", not LiveBridge's \(eventType): LiveBridge would not hear it")
                failed = true
                continue
            }
            let known = rules ?? assumedRules(for: fired.data)
            switch ActivityEvent.decode(fired.data, rules: known) {
            case .failure(let failure):
                failed = true
                print("\(fired.path): \(eventType) for \(failure.activity.isEmpty ? "an unnamed activity" : failure.activity) would not be sent:")
                for issue in failure.issues { print("  \(issue)") }
            case .success(let event):
                let action = fired.data["action"]?.stringValue ?? "start"
                print("\(fired.path): \(eventType) \(action) \(event.activity) → \(event.request)")
                if event.request.kind.definition.isDrawnByPreview, event.action != .end || !(event.request.body["content"]?.objectValue?.isEmpty ?? true) {
                    drawn = (event.activity, event.request.body)
                }
            }
        }
        if let out = args["out"] {
            guard let drawn else {
                standardError("livebridge blueprint test: nothing to draw (no \(BackendDefinition.drawnServiceNames) payload was fired)")
                return 1
            }
            let svg = PreviewRenderer.svg(drawn.payload, at: now, title: drawn.title)
            let output = out.hasSuffix(".html") ? PreviewRenderer.html([(drawn.title, svg)]) : svg
            guard FileManager.default.createFile(atPath: out, contents: Data(output.utf8)) else { throw UsageError("cannot write \(out)") }
        }
        return failed ? 1 : 0
    }

    /// Without a rules file: the backend an event names (or `aivi`), taken as an Aivi backend.
    static func assumedRules(for data: JSONValue) -> RulesFile {
        let name = data["backend"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "aivi"
        let safe = name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } ? name : "aivi"
        let text = "backends: { \(safe): { type: aivi, token: blueprint-test } }\ndefaults: { backend: \(safe) }\n"
        switch RulesLoader.load(text: text, file: "(assumed rules)") {
        case .success(let rules): return rules
        case .failure: preconditionFailure("the assumed rules always load")
        }
    }
}
