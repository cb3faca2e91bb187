import Platform
import Dispatch
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
          check      validate a rules file: every error with file:line:column
          render     print the request each backend would receive for given states
          send       send one push of an activity now (or --dry-run to see it)
          preview    draw what the phone will show, as SVG or HTML
          blueprint  lint Home Assistant blueprints that fire livebridge_activity
          simulator  run the Home Assistant simulator (for trying watch without a Home Assistant)
          help       show this help

        Run `livebridge <command> --help` for a command's options.
        """

    static func run(_ arguments: [String]) async -> Int32 {
        guard let command = arguments.first else {
            standardError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "run": return try await RunCommand.run(rest)
            case "demo": return try await DemoCommand.run(rest)
            case "preview-server": return try await PreviewServerCommand.run(rest)
            case "watch": return try await WatchCommand.run(rest)
            case "check": return try CheckCommand.run(rest)
            case "render": return try RenderCommand.run(rest)
            case "send": return try await SendCommand.run(rest)
            case "preview": return try PreviewCommand.run(rest)
            case "blueprint": return try BlueprintCommand.run(rest)
            case "simulator": return try await SimulatorCommand.run(rest)
            case "help", "--help", "-h":
                print(usage)
                return 0
            default:
                standardError("livebridge: unknown command \"\(command)\"\n\n\(usage)")
                return 2
            }
        } catch let error as UsageError {
            standardError("livebridge \(command): \(error.message)")
            return 2
        } catch {
            standardError("livebridge \(command): \(error)")
            return 1
        }
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
