import FoundationEssentials
import Glibc
import Platform

// livebridge: the executable is argument parsing and subcommands only; the work is in the modules.
// First, before any other thread allocates: glibc fixes its arena limit at the first arena it makes for a thread.
HeapArenas.limit(to: 1)
let arguments = Array(CommandLine.arguments.dropFirst())
// The command runs on Swift's thread pool and ends the process; the main thread waits (see MainThread.park).
Task.detached { [arguments] in exit(await LiveBridgeCommand.run(arguments)) }
MainThread.park()
