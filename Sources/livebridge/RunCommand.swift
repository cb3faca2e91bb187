import Platform
import FoundationEssentials
import Glibc
import LiveBridge
import Rules

/// `livebridge run --config FILE|--addon-options FILE [--data-dir DIR] [--status-listen HOST:PORT] [--dry-run] [--log-level L] [--log-format text|json] [--shutdown-deadline SECONDS]`.
enum RunCommand {
    static let help = """
        usage: livebridge run --config FILE|--addon-options FILE [--data-dir DIR] [--status-listen HOST:PORT] [--dry-run]
                              [--log-level debug|info|warning|error] [--log-format text|json] [--shutdown-deadline SECONDS]

        Runs beside Home Assistant: pushes Live Activities as the rules say. SIGHUP reloads the rules; SIGTERM or
        Ctrl-C sends what is due (--shutdown-deadline seconds at most, 5 by default: keep it under the supervisor's
        stop timeout) and exits; a second signal exits at once.
        --data-dir defaults to $STATE_DIRECTORY (systemd), else ~/.local/state/livebridge.
        --status-listen serves /healthz, /metrics, /activities and the status page (/) there, over the rules file's
        status.listen (the add-on serves its ingress page this way).
        --addon-options FILE reads rules, log_level and dry_run from the add-on's options (/data/options.json);
        flags given here win. When that rules file does not exist yet, `livebridge suggest` writes one first.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["config", "data-dir", "status-listen", "log-level", "log-format", "addon-options",
                                                              "shutdown-deadline"],
                                    flags: ["dry-run"])
        let addon: AddonOptions?
        do { addon = try args["addon-options"].map(AddonOptions.init(contentsOf:)) } catch {
            // A bad options file is like a bad rules file: a failure to start (1), not a mistake in the command line.
            standardError("livebridge run: \(error)")
            return 1
        }
        guard let config = args["config"] ?? args.positional.first ?? addon?.rules else { throw UsageError("--config FILE is required\n\n\(help)") }
        if let addon, config == addon.rules, !FileManager.default.fileExists(atPath: config) {
            // The add-on's first start: propose a rules file from Home Assistant's states (through the Supervisor).
            // It is not run: its first line marks it a proposal until the user deletes it.
            standardError("livebridge run: no rules file at \(config) yet: writing a proposal from Home Assistant's states (livebridge suggest); "
                          + "read it, put your tokens in secrets.yaml, delete its first line, then restart")
            _ = try? await SuggestCommand.run(["--output", config])
        }
        guard let level = Logger.Level(name: args["log-level"] ?? addon?.logLevel ?? "info") else {
            throw UsageError("--log-level must be debug, info, warning or error")
        }
        guard let format = Logger.Format(rawValue: args["log-format"] ?? "text") else { throw UsageError("--log-format must be text or json") }
        let environment = ProcessInfo.processInfo.environment
        let dataDirectory = args["data-dir"] ?? environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
            ?? (FileManager.default.homeDirectoryForCurrentUser.path + "/.local/state/livebridge")
        var options = LiveBridgeService.Options(configPath: config, dataDirectory: dataDirectory)
        options.dryRun = args.has("dry-run") || addon?.dryRun == true
        if let listen = args["status-listen"] {
            guard let listener = RulesFile.StatusListener(parsing: listen) else {
                throw UsageError("--status-listen \(listen) is not HOST:PORT (e.g. 0.0.0.0:8099)")
            }
            options.statusListen = listener
        }
        if let text = args["shutdown-deadline"] {
            guard let seconds = Double(text), seconds > 0, seconds <= 300 else {
                throw UsageError("--shutdown-deadline \(OutsideText.quoted(text)) is not a number of seconds above 0 and at most 300 (e.g. 5)")
            }
            options.shutdownDeadline = .milliseconds(max(1, Int64((seconds * 1000).rounded())))
        }
        let logger = Logger(level: level, format: format)
        let service: LiveBridgeService
        do { service = try LiveBridgeService(options: options, logger: logger) } catch {
            standardError("livebridge run: \(error)")
            return 1
        }
        do {
            try await ServiceRunner.run(service, signals: UnixSignals([.terminate, .interrupt, .hangup]))
            return 0
        } catch {
            // Said in the log already (a rejected token); the exit status tells a supervisor.
            return 1
        }
    }
}
