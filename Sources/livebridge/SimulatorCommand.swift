import Foundation
import HomeAssistant
import HomeAssistantSimulator
import JSON

/// `livebridge simulator`: a simulated Home Assistant with a washer that runs a cycle on a loop,
/// so `watch` can be tried without a real one.
enum SimulatorCommand {
    static let help = """
        usage: livebridge simulator [--port N] [--token-file FILE] [--cycle SECONDS]

        Serves ws://127.0.0.1:PORT/api/websocket (default port 8124). The token is read from FILE, else
        $LIVEBRIDGE_HA_TOKEN, else "demo-token". Entities: sensor.washer_progress, sensor.washer_status,
        timer.laundry.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["port", "token-file", "cycle"], flags: ["help"])
        if args.has("help") {
            print(help)
            return 0
        }
        guard let port = Int(args["port"] ?? "8124"), (0...65535).contains(port) else { throw UsageError("--port must be 0–65535") }
        guard let cycle = Double(args["cycle"] ?? "60"), cycle >= 1 else { throw UsageError("--cycle must be at least 1 second") }
        var token = ProcessInfo.processInfo.environment["LIVEBRIDGE_HA_TOKEN"] ?? "demo-token"
        if let file = args["token-file"] { token = try WatchCommand.readToken(file: file).secret }
        var options = HomeAssistantSimulator.Options(token: token)
        options.port = port
        let simulator = try HomeAssistantSimulator(options: options)
        standardError("livebridge simulator: serving \(simulator.url)")
        let stop = SignalWatcher(signals: [SIGINT, SIGTERM]) { exit(0) }
        await WasherScript(simulator: simulator, cycle: cycle).runForever()
        withExtendedLifetime(stop) {}
        return 0
    }
}

/// A washer that runs, reports its progress, finishes and rests, on a loop.
struct WasherScript {
    let simulator: HomeAssistantSimulator
    let cycle: Double

    func runForever() async {
        let steps = 10
        while true {
            let finishesAt = Date().addingTimeInterval(cycle * 0.8).timeIntervalSince1970
            await simulator.setState("sensor.washer_status", "running", attributes: ["friendly_name": "Washer"])
            await simulator.setState("timer.laundry", "active", attributes: [
                "finishes_at": .string(Timestamp.iso8601(finishesAt.rounded())), "friendly_name": "Laundry",
            ])
            for step in 0...steps {
                await simulator.setState("sensor.washer_progress", String(step * 100 / steps), attributes: [
                    "unit_of_measurement": "%", "friendly_name": "Washer progress",
                ])
                try? await Task.sleep(for: .seconds(cycle * 0.8 / Double(steps)))
            }
            await simulator.setState("sensor.washer_status", "idle", attributes: ["friendly_name": "Washer"])
            await simulator.setState("timer.laundry", "idle", attributes: ["friendly_name": "Laundry"])
            try? await Task.sleep(for: .seconds(cycle * 0.2))
        }
    }
}
