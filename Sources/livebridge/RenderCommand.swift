import HTTPClient
import LiveBridge
import FoundationEssentials
import Glibc
import LiveActivity
import Rules
import Templates

/// `livebridge render CONFIG (--states STATES.json | --url URL --token-file FILE) [--activity ID] [--at ISO_TIME]
/// [--phase start|update|end]`: the exact request each backend would receive.
enum RenderCommand {
    static let help = """
        usage: livebridge render CONFIG [--states STATES.json | --url URL (--token-file FILE | env LIVEBRIDGE_HA_TOKEN)]
                                        [--activity ID] [--at ISO_TIME] [--phase start|update|end]

        Evaluates the rules and prints, per activity, the request its backend would receive. --at sets now()
        (default: the current time).
        --states: states shaped like Home Assistant's GET /api/states. --url and --token-file: Home Assistant's
        live states, and it renders the fields only it can (area_name, device_attr, state_translated…); with
        both, the states come from the file and Home Assistant renders only those fields. With neither, the
        Home Assistant the rules file names (its url and token), or in the add-on the Supervisor's; an entity the
        rules read that it lacks is warned about. Needs no push tokens: missing secrets stand as placeholders.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["states", "activity", "at", "phase", "url", "token-file"])
        guard args.positional.count == 1 else { throw UsageError("name one rules file\n\n\(help)") }
        var target = try HomeAssistantTarget.from(args)
        let now = try CommandSupport.time(args)
        var phase: PushKind?
        if let text = args["phase"] {
            guard let p = PushKind(rawValue: text) else { throw UsageError("--phase must be start, update or end") }
            phase = p
        }
        guard let rules = CommandSupport.rules(args.positional[0], secretsOptional: true) else { return 1 }
        if args["states"] == nil, target == nil {
            // Neither flag: the Home Assistant the rules file names, with its token.
            guard let settings = rules.homeAssistant, let own = HomeAssistantTarget(settings) else {
                throw UsageError("give --states STATES.json, or --url and --token-file for the live states (the rules file's homeassistant: "
                                 + "has no token this command can read: its secret is not set)")
            }
            target = own
        }
        let (states, order) = if let path = args["states"] { try StatesFile.loadInOrder(path: path) } else { try await target!.states(command: "render") }
        // Live states: an entity the rules read that Home Assistant lacks is a typo or a removed integration.
        if args["states"] == nil { CommandSupport.warnAboutMissing(rules, in: states, command: "render") }
        var context = EvaluationContext(states: states, order: order, now: now)
        let remote = rules.templatesRenderedByHomeAssistant
        if let target {
            context.renderedByHomeAssistant = try await HomeAssistantRendering.fetch(remote, from: target)
        } else if !remote.isEmpty {
            print("Not shown offline (Home Assistant renders them; pass --url and --token-file to ask it):")
            for rule in rules.activities {
                for field in rule.fieldsRenderedByHomeAssistant { print("  \(field.path): \(field.reason)") }
            }
            print("")
        }
        var activities = rules.activities
        if let id = args["activity"] {
            activities = activities.filter { $0.id == id }
            guard !activities.isEmpty else {
                throw UsageError("no activity \"\(id)\"; the file has: " + rules.activities.map(\.id).joined(separator: ", "))
            }
        }
        var failed = false
        let client = HTTPClient()  // never used to send: it names the backends' HTTP requests
        for rule in activities {
            let active: Bool
            switch ActivityRenderer.isActive(rule, in: context) {
            case .failure(let error):
                print("\(rule.id): active_when failed: \(error)\n")
                failed = true
                continue
            case .success(let value): active = value
            }
            let shown = phase ?? (active ? .start : .end)
            for target in rule.targets {
                // One activity at several targets: each named, as each receives its own request.
                let label = rule.targets.count > 1 ? "\(rule.id) at \(target.name)" : rule.id
                var notes: [PayloadIssue] = []
                if shown == .end {
                    // Exactly what run sends at the end: with a fallback when the end's fields do not render, built
                    // from what run would have sent last (here: this state's update).
                    var ignored: [PayloadIssue] = []
                    let last = try? ActivityRenderer.render(rule, for: target, phase: .update, in: context, notes: &ignored).get()
                    let request = ActivityRenderer.end(rule, for: target, in: context, last: last, notes: &notes)
                    print("\(label): \(active ? "active" : "inactive"), end → \(target.name) (\(target.kind.rawValue))")
                    print(CommandSupport.exchanges(request, kind: .end, through: BackendFactory.make(target.backend, client: client, connection: nil)))
                } else {
                    switch ActivityRenderer.render(rule, for: target, phase: shown, in: context, notes: &notes) {
                    case .success(let request):
                        print("\(label): \(active ? "active" : "inactive"), \(shown.rawValue) → \(target.name) (\(target.kind.rawValue))")
                        print(CommandSupport.exchanges(request, kind: shown, through: BackendFactory.make(target.backend, client: client, connection: nil)))
                    case .failure(let failure):
                        print("\(label): \(active ? "active" : "inactive"), nothing would be sent: " + failure.issues.map(\.description).joined(separator: "; "))
                        failed = true
                    }
                }
                for note in notes { print("  note: \(note)") }
                print("")
            }
        }
        return failed ? 1 : 0
    }
}
