import Glibc
import Rules

/// `livebridge blueprint lint FILE...`: every error with line:column; exit 1 on any.
enum BlueprintCommand {
    static let help = "usage: livebridge blueprint lint FILE...\n\nChecks Home Assistant blueprints that fire livebridge_activity."

    static func run(_ arguments: [String]) throws -> Int32 {
        guard arguments.first == "lint" else { throw UsageError(help) }
        let args = try ArgumentList(Array(arguments.dropFirst()), valued: [])
        guard !args.positional.isEmpty else { throw UsageError("name at least one blueprint file") }
        var failed = false
        for file in args.positional {
            let errors = BlueprintLinter.lint(file: file)
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
