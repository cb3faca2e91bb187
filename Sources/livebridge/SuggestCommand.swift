import FoundationEssentials
import Glibc
import HomeAssistant
import Rules
import Platform

/// `livebridge suggest (--url URL --token-file FILE | --states STATES.json) [--output FILE]`: a first rules file,
/// one activity per appliance recognised in Home Assistant's states.
enum SuggestCommand {
    static let help = """
        usage: livebridge suggest (--url URL (--token-file FILE | env LIVEBRIDGE_HA_TOKEN) | --states STATES.json)
                                  [--output FILE [--force]]

        Reads Home Assistant's states and proposes a commented rules file: one Aivi activity per washer, dryer,
        dishwasher, 3D printer, EV charger, timer, robot vacuum and media player it recognises (by name, device
        class and unit), each naming the entities it reads. From a live Home Assistant the registries group an
        appliance's sensors by device, name it as the device is named and say its area (an administrator's token
        reads them; others get names from the states). In the add-on, with neither --url nor --states, Home
        Assistant is reached through the Supervisor.
        --output writes the file (never over an existing one without --force) and, when secrets.yaml is not beside
        it yet, that too (mode 600): the access token given with --token-file as ha_token and a placeholder for
        aivi_token. The written file is checked as `livebridge check` does. Without --output the file is printed.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["url", "token-file", "states", "output"], flags: ["force"])
        guard args.positional.isEmpty else { throw UsageError("suggest takes no file name; write it with --output FILE") }
        let target = try HomeAssistantTarget.from(args)
        let states: [String: EntityState]
        var directory = DeviceDirectory.empty
        let connection: RulesProposal.Connection
        let source: String
        if let path = args["states"] {
            states = try StatesFile.load(path: path)
            (connection, source) = (.url(target?.url ?? "http://homeassistant.local:8123"), path)
        } else if let target {
            (states, _, directory) = try await target.snapshot(command: "suggest", registries: true)
            (connection, source) = (target.throughSupervisor ? .supervisor : .url(target.url), "Home Assistant at \(target.url)")
        } else {
            throw UsageError("give --url and --token-file (or --states STATES.json)\n\n\(help)")
        }
        let appliances = ApplianceRecognizer.recognise(states, directory: directory)
        let proposal = RulesProposal(connection: connection, appliances: appliances, source: source)
        standardError("livebridge suggest: \(states.count) entities, \(appliances.count) recognised"
                      + (appliances.isEmpty ? "" : ": " + appliances.map { "\($0.id) (\($0.kind.title))" }.joined(separator: ", ")))
        guard let output = args["output"] else {
            standardOutput(proposal.text)
            return 0
        }
        if FileManager.default.fileExists(atPath: output), !args.has("force") {
            standardError("livebridge suggest: \(output) exists; give --force to replace it, or another --output")
            return 1
        }
        // Marked as a proposal: nothing runs it until the user has read it and deleted the mark.
        do { try (Proposal.marker + "\n" + proposal.text).write(toFile: output, atomically: true, encoding: .utf8) } catch {
            standardError("livebridge suggest: cannot write \(output): \(error)")
            return 1
        }
        try writeSecrets(beside: output, names: proposal.secretNames, token: target.flatMap { $0.throughSupervisor ? nil : $0.token })
        // The proposal is checked as the user will check it once the mark is gone (its placeholder tokens are for
        // check and run to refuse: problemsForRun).
        switch RulesLoader.load(text: proposal.text, file: output, environment: ProcessInfo.processInfo.environment) {
        case .failure(let errors):
            for error in errors.errors { standardError(error.description) }
            return 1
        case .success(let rules):
            standardError("livebridge suggest: wrote \(output): OK — \(rules.activities.count) activities; next: read it, put your tokens in "
                          + "secrets.yaml, delete its first line, then livebridge check, render, run")
        }
        return 0
    }

    /// secrets.yaml beside the rules file, when there is none: the names the proposal asks for, the access token when
    /// known, placeholders otherwise. An existing one is left alone; the names it lacks are said.
    static func writeSecrets(beside rulesFile: String, names: [String], token: AccessToken?) throws {
        let path = rulesFile.lastIndex(of: "/").map { String(rulesFile[...$0]) + "secrets.yaml" } ?? "secrets.yaml"
        if FileManager.default.fileExists(atPath: path) {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            let missing = names.filter { name in !text.split(separator: "\n").contains { $0.hasPrefix(name + ":") } }
            if !missing.isEmpty { standardError("livebridge suggest: add \(missing.joined(separator: ", ")) to \(path)") }
            return
        }
        var text = "# Secrets for the rules beside this file; never share or commit it.\n"
        for name in names {
            if name == "ha_token", let token {
                text += "ha_token: \(RulesProposal.quoted(token.secret))\n"
            } else {
                text += "\(name): \"\(Proposal.placeholder(for: name))\"\n"
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw UsageError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        if let failure = Array(text.utf8).withUnsafeBytes({ writeAll(descriptor, $0) }) {
            throw UsageError("cannot write \(path): \(String(cString: strerror(failure)))")
        }
        standardError("livebridge suggest: wrote \(path) (mode 600)" + (names.contains("aivi_token") ? ": put your Aivi token in aivi_token" : ""))
    }
}
