import Dispatcher
import LiveActivity
import FoundationEssentials
import Glibc
import HomeAssistant
import Rules
import Platform
import LiveBridge
import HTTPClient

/// What several commands share: `--at`, loading a rules file (its errors printed), finding an activity.
enum CommandSupport {
    /// `--at ISO_TIME`, else now.
    static func time(_ args: ArgumentList) throws -> Double {
        guard let at = args["at"] else { return Date().timeIntervalSince1970 }
        guard let epoch = Timestamp.epoch(fromISO8601: at) else { throw UsageError("--at \"\(at)\" is not an ISO 8601 time") }
        return epoch
    }

    /// The rules, or nil after printing every error to stderr.
    /// `secretsOptional` for commands that push nothing: they run before the secrets exist.
    static func rules(_ path: String, secretsOptional: Bool = false) -> RulesFile? {
        switch RulesLoader.load(file: path, secretsOptional: secretsOptional) {
        case .failure(let errors):
            for error in errors.errors { standardError(error.description) }
            return nil
        case .success(let rules):
            return rules
        }
    }

    /// The exact exchanges one push makes, as `send --dry-run` and `render` print them: method and URL, headers with
    /// the token masked, body; a later request (PushWard's two-phase end) marked with when it goes. Home Assistant's
    /// is a WebSocket command over the live connection, not HTTP.
    static func exchanges(_ request: BackendRequest, kind: PushKind, through backend: any PushBackend) -> String {
        guard let http = backend as? any HTTPExchanges else {
            return "WebSocket call_service \(request.target)\n\n" + String(decoding: request.bodyBytes, as: UTF8.self)
        }
        var out: [String] = []
        for (i, wire) in http.wire(request, kind: kind).enumerated() {
            if i > 0 { out.append("") }
            if i > 0, let later = request.dismissal?.after, wire.body == request.dismissalRequest?.bodyBytes {
                out.append("# \(Int(later.components.seconds)) s later:")
            }
            out.append("\(wire.method) \(Self.withoutCredentials(wire.url))")
            out.append(contentsOf: wire.redactedHeaders)
            out.append("")
            out.append(String(decoding: wire.body, as: UTF8.self))
        }
        return out.joined(separator: "\n")
    }

    /// The live states of the Home Assistant a rules file names (its url and token), for a command given no
    /// `--states`: each entity the rules read that Home Assistant lacks is warned about, as `run` does.
    static func liveStates(of rules: RulesFile, command: String) async throws -> (states: [String: EntityState], order: [String]) {
        guard let settings = rules.homeAssistant, let target = HomeAssistantTarget(settings) else {
            throw UsageError("give --states STATES.json (the rules file's homeassistant: has no token this command can read: its secret is not set)")
        }
        let live = try await target.states(command: command)
        warnAboutMissing(rules, in: live.states, command: command)
        return live
    }

    static func warnAboutMissing(_ rules: RulesFile, in states: [String: EntityState], command: String) {
        for id in rules.entityIDs.sorted() where states[id] == nil {
            standardError("livebridge \(command): warning: " + MissingEntity(entityID: id, suggestion: Suggestion.closest(to: id, in: Array(states.keys))).description)
        }
    }

    /// A URL with any `user:password@` masked, for printing.
    static func withoutCredentials(_ url: String) -> String {
        let parts = url.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return url }
        let authority = parts[1].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return url }
        return parts[0] + "://****@" + parts[1][parts[1].index(after: at)...]
    }

    static func activity(_ id: String, in rules: RulesFile) throws -> ActivityRule {
        guard let rule = rules.activities.first(where: { $0.id == id }) else {
            throw UsageError("no activity \"\(id)\"; the file has: " + rules.activities.map(\.id).joined(separator: ", "))
        }
        return rule
    }
}
