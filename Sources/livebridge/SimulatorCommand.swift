import Platform
import FoundationEssentials
import Glibc
import HomeAssistantSimulator
import JSON
import HomeAssistant

/// `livebridge simulator`: a simulated Home Assistant playing the demo household on a loop,
/// so `watch` can be tried without a real one.
enum SimulatorCommand {
    static let help = """
        usage: livebridge simulator [--port N] [--token-file FILE] [--cycle SECONDS]

        Serves ws://127.0.0.1:PORT/api/websocket (default port 8124). The token is read from FILE, else
        $LIVEBRIDGE_HA_TOKEN, else "demo-token". Entities: the demo household's (sensor.washer_status,
        sensor.washer_progress, timer.laundry, binary_sensor.ev_charging, sensor.ev_battery, vacuum.robo, …).
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["port", "token-file", "cycle"])
        guard let port = Int(args["port"] ?? "8124"), (0...65535).contains(port) else { throw UsageError("--port must be 0–65535") }
        guard let cycle = Double(args["cycle"] ?? "60"), cycle >= 5 else { throw UsageError("--cycle must be at least 5 seconds") }
        var token = ProcessInfo.processInfo.environment["LIVEBRIDGE_HA_TOKEN"] ?? "demo-token"
        if let file = args["token-file"] { token = try WatchCommand.readToken(file: file).secret }
        var options = HomeAssistantSimulator.Options(token: token)
        options.port = port
        let simulator = try HomeAssistantSimulator(options: options)
        standardError("livebridge simulator: serving \(simulator.url)")
        // The household's script runs until the first signal.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await HouseholdScript(simulator: simulator, cycle: cycle).runForever() }
            for await _ in UnixSignals([.interrupt, .terminate]) { break }
            group.cancelAll()
        }
        return 0
    }
}

