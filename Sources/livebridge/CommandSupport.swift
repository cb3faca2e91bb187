import Dispatch
import FoundationEssentials
import Glibc
import HomeAssistant
import Rules
import Platform

/// What several commands share: `--at`, loading a rules file (its errors printed), finding an activity.
enum CommandSupport {
    /// `--at ISO_TIME`, else now.
    static func time(_ args: ArgumentList) throws -> Double {
        guard let at = args["at"] else { return Date().timeIntervalSince1970 }
        guard let epoch = Timestamp.epoch(fromISO8601: at) else { throw UsageError("--at \"\(at)\" is not an ISO 8601 time") }
        return epoch
    }

    /// The rules, or nil after printing every error to stderr.
    static func rules(_ path: String) -> RulesFile? {
        switch RulesLoader.load(file: path) {
        case .failure(let errors):
            for error in errors.errors { standardError(error.description) }
            return nil
        case .success(let rules):
            return rules
        }
    }

    static func activity(_ id: String, in rules: RulesFile) throws -> ActivityRule {
        guard let rule = rules.activities.first(where: { $0.id == id }) else {
            throw UsageError("no activity \"\(id)\"; the file has: " + rules.activities.map(\.id).joined(separator: ", "))
        }
        return rule
    }
}
