import Dispatch
import FoundationEssentials
import Glibc

// livebridge: the executable is argument parsing and subcommands only; the work is in the modules.
let arguments = Array(CommandLine.arguments.dropFirst())
let status = await LiveBridgeCommand.run(arguments)
exit(status)
