import Glibc
import Rules

/// `livebridge blueprint lint [--rules RULES.yaml] FILE...`: every error with line:column; exit 1 on any.
enum BlueprintCommand {
    static let help = """
        usage: livebridge blueprint lint [--rules RULES.yaml] FILE...

        Checks Home Assistant blueprints that fire LiveBridge's event: the event type it listens to
        (livebridge_activity, or the rules' events.type), the actions it takes, the backends the rules declare
        (with --rules), and each fixed payload against its template.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.first == "lint" else { throw UsageError(help) }
        let args = try ArgumentList(Array(arguments.dropFirst()), valued: ["rules"])
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
}
