import FoundationEssentials
import Glibc
import JSON
import LiveActivity
import Preview
import Rules
import Templates

/// `livebridge preview (PAYLOAD.json | --config FILE --states STATES.json --activity ID) [--at ISO_TIME] --out FILE.svg|FILE.html`:
/// what the phone will show, drawn.
enum PreviewCommand {
    static var help: String { """
        usage: livebridge preview PAYLOAD.json [--at ISO_TIME] --out FILE.svg|FILE.html
               livebridge preview --config FILE [--states STATES.json] --activity ID [--at ISO_TIME] --out FILE.svg|FILE.html

        Draws the Lock Screen card and the Dynamic Island (compact, minimal, expanded) for a payload of
        \(BackendDefinition.drawnServiceNames).
        Timers (time_since / time_until) show their value at --at (default: now). With --config and no
        --states, the activity is rendered from the live states of the Home Assistant the rules file names.
        """
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["config", "states", "activity", "at", "out"])
        guard let out = args["out"], out.hasSuffix(".svg") || out.hasSuffix(".html") else { throw UsageError("--out FILE.svg or FILE.html is required") }
        let now = try CommandSupport.time(args)
        let payload: JSONValue
        let title: String
        if let config = args["config"] {
            guard let id = args["activity"] else { throw UsageError("--config needs --activity") }
            guard let rules = CommandSupport.rules(config, secretsOptional: true) else { return 1 }
            let rule = try CommandSupport.activity(id, in: rules)
            guard let target = rule.targets.first(where: { $0.kind.definition.isDrawnByPreview }) else {
                let drawn = BackendKind.allCases.filter(\.definition.isDrawnByPreview).map(\.definition.name).joined(separator: ", ")
                throw UsageError("\(id) is a Home Assistant live update, drawn by the companion app; preview draws \(drawn) payloads")
            }
            // --states, or the live states of the Home Assistant the rules file names.
            let loaded = if let statesPath = args["states"] { try StatesFile.loadInOrder(path: statesPath) } else { try await CommandSupport.liveStates(of: rules, command: "preview") }
            let context = EvaluationContext(loading: loaded, now: now)
            let active = (try? ActivityRenderer.isActive(rule, in: context).get()) ?? false
            var notes: [PayloadIssue] = []
            switch ActivityRenderer.render(rule, for: target, phase: active ? .update : .end, in: context, notes: &notes) {
            case .failure(let failure):
                standardError("livebridge preview: nothing to draw: " + failure.issues.map(\.description).joined(separator: "; "))
                return 1
            case .success(let request): payload = request.body
            }
            title = id
        } else {
            guard let path = args.positional.first else { throw UsageError("name a PAYLOAD.json or give --config\n\n\(help)") }
            guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
            do { payload = try JSONParser.parse(Array(data)) } catch { throw UsageError("\(path): \(error)") }
            title = String(path.split(separator: "/").last ?? Substring(path))
        }
        let svg = PreviewRenderer.svg(payload, at: now, title: title)
        let output = out.hasSuffix(".html") ? PreviewRenderer.html([(title, svg)]) : svg
        guard FileManager.default.createFile(atPath: out, contents: Data(output.utf8)) else { throw UsageError("cannot write \(out)") }
        return 0
    }
}
