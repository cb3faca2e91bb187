import FoundationEssentials
import Glibc
import HTTPClient
import HomeAssistant
import LiveActivity
import LiveBridge
import Rules
import Templates
import JSON
import Dispatcher

/// `livebridge send CONFIG --activity ID --states STATES.json [--target NAME] [--action start|update|end] [--dry-run]`:
/// one real push, to try a template on a phone. `--dry-run` shows the request, token masked, instead.
enum SendCommand {
    static let help = """
        usage: livebridge send CONFIG --activity ID [--states STATES.json] [--target NAME] [--action start|update|end] [--dry-run]
                                      [--at ISO_TIME]

        Renders the activity against the states (--states, or the live states of the Home Assistant the rules file
        names) and sends that one push now (no debounce). --dry-run prints the
        method, URL, headers (token masked) and body instead of sending. --target picks one of an activity's targets
        (a backend, or backend/notify.… for one of its phones); required when it has several.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["activity", "states", "action", "at", "target"], flags: ["dry-run"])
        guard args.positional.count == 1 else { throw UsageError("name one rules file\n\n\(help)") }
        guard let id = args["activity"] else { throw UsageError("--activity ID is required") }
        let phase = try PushKind(rawValue: args["action"] ?? "update") ?? { throw UsageError("--action must be start, update or end") }()
        let now = try CommandSupport.time(args)
        guard let rules = CommandSupport.rules(args.positional[0], secretsOptional: args.has("dry-run")) else { return 1 }
        let rule = try CommandSupport.activity(id, in: rules)
        let target: ActivityTarget
        if let name = args["target"] {
            guard let named = rule.target(named: name) else {
                throw UsageError("activity \(id) has no target \"\(name)\"; its targets: " + rule.targets.map(\.name).joined(separator: ", "))
            }
            target = named
        } else {
            guard rule.targets.count == 1 else {
                throw UsageError("activity \(id) has several targets; name one with --target: " + rule.targets.map(\.name).joined(separator: ", "))
            }
            target = rule.targets[0]
        }
        // --states, or the live states of the Home Assistant the rules file names.
        let loaded = if let statesPath = args["states"] { try StatesFile.loadInOrder(path: statesPath) } else { try await CommandSupport.liveStates(of: rules, command: "send") }
        let context = EvaluationContext(loading: loaded, now: now)
        var notes: [PayloadIssue] = []
        let request: BackendRequest
        switch ActivityRenderer.render(rule, for: target, phase: phase, in: context, notes: &notes) {
        case .failure(let failure):
            standardError("livebridge send: nothing to send: " + failure.issues.map(\.description).joined(separator: "; "))
            return 1
        case .success(let rendered): request = rendered
        }
        for note in notes { standardError("livebridge send: note: \(note)") }

        let kind = PushKind(rawValue: phase.rawValue) ?? .update
        if args.has("dry-run") {
            let backend = BackendFactory.make(target.backend, client: HTTPClient(), connection: nil)
            print(CommandSupport.exchanges(request, kind: kind, through: backend))
            return 0
        }
        let report: DeliveryReport
        if target.kind == .homeassistant {
            guard let settings = rules.homeAssistant else { throw UsageError("a homeassistant backend needs the homeassistant: section") }
            guard let home = HomeAssistantTarget(settings) else { throw UsageError("the homeassistant: section's token is not set") }
            let definition = target.backend
            report = try await home.withConnection(command: "send") { connection in
                await BackendFactory.make(definition, client: HTTPClient(), connection: connection).deliver(request, kind: kind)
            }
        } else {
            report = await BackendFactory.make(target.backend, client: HTTPClient(), connection: nil).deliver(request, kind: kind)
        }
        let status = report.status.map { "HTTP \($0)" } ?? "no HTTP status"
        switch report.outcome {
        case .delivered, .alreadyRunning:
            print("sent \(phase.rawValue) of \(rule.id) to \(target.name): \(status)")
            return 0
        default:
            standardError("livebridge send: \(target.name) did not take the \(phase.rawValue): \(status)" + (report.code.map { ", \($0)" } ?? ""))
            return 1
        }
    }
}
