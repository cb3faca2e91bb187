import Dispatch
import FoundationEssentials
import Glibc
import Rules

/// `livebridge check CONFIG`: every error with file:line:column, exit 1; or a one-line summary, exit 0.
enum CheckCommand {
    static let help = "usage: livebridge check CONFIG\n\nValidates a rules file and prints every error with file:line:column."

    static func run(_ arguments: [String]) throws -> Int32 {
        let args = try ArgumentList(arguments, valued: [])
        guard args.positional.count == 1 else { throw UsageError("name one rules file\n\n\(help)") }
        switch RulesLoader.load(file: args.positional[0]).flatMap({ rules in
            rules.problemsForRun.isEmpty ? .success(rules) : .failure(ConfigErrors(rules.problemsForRun))
        }) {
        case .failure(let errors):
            for error in errors.errors { standardError(error.description) }
            standardError("\(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s")")
            return 1
        case .success(let rules):
            let backends = Set(rules.activities.flatMap { $0.targets.map(\.backend.name) }).count
            print("\(rules.path): OK — \(rules.activities.count) activit\(rules.activities.count == 1 ? "y" : "ies"), "
                + "\(rules.entityIDs.count) entit\(rules.entityIDs.count == 1 ? "y" : "ies"), \(rules.backends.count) backend\(rules.backends.count == 1 ? "" : "s") (\(backends) in use)")
            if let settings = rules.homeAssistant, settings.throughSupervisor {
                print("Home Assistant: \(settings.url), through the Supervisor with the add-on's token ($\(SupervisorAccess.tokenVariable))")
            }
            // The fields LiveBridge cannot evaluate itself: Home Assistant renders them while running.
            for rule in rules.activities {
                for field in rule.fieldsRenderedByHomeAssistant {
                    print("\(field.location): \(field.path): rendered by Home Assistant (\(field.reason))")
                }
            }
            return 0
        }
    }
}
