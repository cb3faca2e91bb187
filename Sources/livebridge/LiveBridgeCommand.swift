import Platform
import FoundationEssentials
import Glibc

/// Dispatches `livebridge SUBCOMMAND …` to its command.
enum LiveBridgeCommand {
    static let usage = """
        usage: livebridge <command> [options]

        commands:
          demo       the whole thing with no Home Assistant and no phone: a live preview page
          preview-server  the demo's preview backend on its own, for trying a real rules file
          run        run beside Home Assistant, pushing Live Activities as the rules say
          watch      print the state of Home Assistant entities as JSON lines, live
          suggest    propose a rules file for the appliances Home Assistant has
          check      validate a rules file: every error with file:line:column
          render     print the request each backend would receive for given states
          template   render a template to text, as Developer Tools → Template does
          send       send one push of an activity now (or --dry-run to see it)
          preview    draw what the phone will show, as SVG or HTML
          blueprint  lint Home Assistant blueprints that fire livebridge_activity
          healthcheck  ask a running LiveBridge's /healthz (a container's HEALTHCHECK)
          simulator  the demo's household as a Home Assistant, for trying suggest, run and watch without one
          help       show this help, or a command's: livebridge help CMD

        Run `livebridge help <command>` or `livebridge <command> --help` for a command's options;
        `livebridge --version` prints the version. Exit status: 0 done, 1 failed, 2 a mistake in the command line.
        """

    /// The version `--version` prints and requests carry in their User-Agent.
    static let version = LiveBridgeVersion.current

    /// Each subcommand: its help text and what runs it.
    struct Subcommand: Sendable {
        let help: String
        let run: @Sendable ([String]) async throws -> Int32
    }

    static let subcommands: [String: Subcommand] = [
        "run": Subcommand(help: RunCommand.help) { try await RunCommand.run($0) },
        "demo": Subcommand(help: DemoCommand.help) { try await DemoCommand.run($0) },
        "preview-server": Subcommand(help: PreviewServerCommand.help) { try await PreviewServerCommand.run($0) },
        "watch": Subcommand(help: WatchCommand.help) { try await WatchCommand.run($0) },
        "suggest": Subcommand(help: SuggestCommand.help) { try await SuggestCommand.run($0) },
        "check": Subcommand(help: CheckCommand.help) { try await CheckCommand.run($0) },
        "render": Subcommand(help: RenderCommand.help) { try await RenderCommand.run($0) },
        "template": Subcommand(help: TemplateCommand.help) { try await TemplateCommand.run($0) },
        "send": Subcommand(help: SendCommand.help) { try await SendCommand.run($0) },
        "preview": Subcommand(help: PreviewCommand.help) { try await PreviewCommand.run($0) },
        "blueprint": Subcommand(help: BlueprintCommand.help) { try await BlueprintCommand.run($0) },
        "healthcheck": Subcommand(help: HealthCheckCommand.help) { try await HealthCheckCommand.run($0) },
        "simulator": Subcommand(help: SimulatorCommand.help) { try await SimulatorCommand.run($0) },
    ]

    /// Exit statuses, as documented in the README: 0 done, 1 a runtime failure (a bad rules file, a refused
    /// connection, a port in use), 2 a mistake in the command line.
    enum ExitStatus {
        static let success: Int32 = 0, failure: Int32 = 1, usage: Int32 = 2
    }

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            standardError(usage)
            return ExitStatus.usage
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "help", "--help", "-h":
            guard let topic = rest.first else { print(usage); return ExitStatus.success }
            guard let subcommand = subcommands[topic] else { return unknown(topic) }
            print(subcommand.help)
            return ExitStatus.success
        case "--version", "version":
            print("livebridge \(version)")
            return ExitStatus.success
        default:
            break
        }
        guard let subcommand = subcommands[command] else { return unknown(command) }
        // -h or --help anywhere before "--" shows the command's help and starts nothing.
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
            print(subcommand.help)
            return ExitStatus.success
        }
        do {
            return try await subcommand.run(rest)
        } catch let error as UsageError {
            standardError("livebridge \(command): \(error.message)\n(livebridge help \(command) shows its usage)")
            return ExitStatus.usage
        } catch {
            standardError("livebridge \(command): \(error)")
            return ExitStatus.failure
        }
    }

    private static func unknown(_ command: String) -> Int32 {
        let message = "livebridge: unknown command \"\(command)\"" + Suggestion.didYouMean(command, in: subcommands.keys.sorted())
        standardError(message + "\n\n\(usage)")
        return ExitStatus.usage
    }
}

/// A mistake in the command line, told to the user with exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A line for the user on stderr, unbuffered.
func standardError(_ text: String) {
    StandardStream.error.write(text + "\n")
}

/// Text on stdout at once: a pipe's reader sees it now, not when a buffer fills.
func standardOutput(_ text: String) {
    StandardStream.output.write(text)
}
