import Platform
import Foundation
import HomeAssistantSimulator
import JSON
import ProcessMeasurement
import Synchronization
import Testing

/// The real `livebridge` binary as a subprocess against the simulator.
@Suite(.timeLimit(.minutes(1)))
struct WatchCommandTests {
    static let token = "llat-cli-test-4e8a1f"

    @Test func printsCurrentStatesThenChangesAsJSONLinesAndExitsZeroOnSIGTERM() async throws {
        let simulator = try HomeAssistantSimulator(token: Self.token)
        defer { simulator.stop() }
        await simulator.setState("sensor.washer_progress", "10", attributes: ["unit_of_measurement": "%"])
        await simulator.setState("timer.laundry", "idle")
        let tokenFile = try temporaryFile(Self.token + "\n")
        let watch = try Subprocess(["watch", "--url", simulator.url, "--token-file", tokenFile,
                                    "sensor.washer_progress", "timer.laundry"])
        #expect(await watch.stdout.wait { $0.count == 2 })
        let first = try watch.stdout.lines.map { try JSONParser.parse($0) }
        #expect(Set(first.compactMap { $0["entity_id"]?.stringValue }) == ["sensor.washer_progress", "timer.laundry"])
        let washer = try #require(first.first { $0["entity_id"] == "sensor.washer_progress" })
        #expect(washer["state"] == "10")
        #expect(washer["attributes"] == ["unit_of_measurement": "%"])
        #expect(washer["last_changed"]?.stringValue?.hasSuffix("+00:00") == true)
        #expect(washer.objectValue?.keys.sorted() == ["attributes", "entity_id", "last_changed", "last_updated", "state"])

        await simulator.setState("sensor.washer_progress", "20", attributes: ["unit_of_measurement": "%"])
        await simulator.remove("timer.laundry")
        #expect(await watch.stdout.wait { $0.count == 4 }, "\(watch.stdout.lines)")
        #expect(watch.stdout.lines[2].contains(#""state":"20""#))
        #expect(watch.stdout.lines[3] == #"{"entity_id":"timer.laundry","state":null}"#)

        watch.signal(SIGTERM)
        #expect(await watch.exitStatus() == 0)
        let everything = watch.stdout.lines.joined() + watch.stderr.lines.joined()
        #expect(watch.stderr.lines.contains { $0.contains("ready: 2 entities") })
        #expect(!everything.contains(Self.token))
    }

    /// `check` names the fields Home Assistant renders; `render` says offline that it cannot show them, and with
    /// --url/--token-file shows Home Assistant's result.
    @Test func fieldsOnlyHomeAssistantCanRenderAreNamedOfflineAndAskedForOnline() async throws {
        let simulator = try HomeAssistantSimulator(token: Self.token)
        defer { simulator.stop() }
        let template = "{{ area_name('kitchen') }} lights"
        await simulator.setRendering(template, "Kitchen lights")
        let rules = try temporaryFile("""
            homeassistant: { url: "ws://127.0.0.1:1/api/websocket", token: x }
            backends:
              pulse: { type: islandpulse, token: t }
            activities:
              kitchen:
                active_when: "{{ is_state('light.kitchen', 'on') }}"
                backend: pulse
                template: progress
                job_id: kitchen
                progress: 0.5
                message: "\(template)"
            """, suffix: ".yaml")
        let states = try temporaryFile(#"[{"entity_id": "light.kitchen", "state": "on", "attributes": {}, "last_changed": "2026-11-22T12:00:00+00:00"}]"#)
        let check = try Subprocess(["check", rules])
        #expect(await check.exitStatus() == 0)
        #expect(check.stdout.lines.last?.hasSuffix(": activities.kitchen.message: rendered by Home Assistant (area_name reads Home Assistant's registries)") == true, "\(check.stdout.lines)")

        let offline = try Subprocess(["render", rules, "--states", states, "--at", "2026-11-22T12:00:00Z"])
        _ = await offline.exitStatus()
        #expect(offline.stdout.lines.first == "Not shown offline (Home Assistant renders them; pass --url and --token-file to ask it):")
        #expect(offline.stdout.lines.contains("  activities.kitchen.message: area_name reads Home Assistant's registries"))

        let tokenFile = try temporaryFile(Self.token + "\n")
        let online = try Subprocess(["render", rules, "--states", states, "--at", "2026-11-22T12:00:00Z", "--url", simulator.url, "--token-file", tokenFile])
        #expect(await online.exitStatus() == 0, "\(online.stdout.lines) \(online.stderr.lines)")
        #expect(online.stdout.lines.contains { $0.contains(#""message":"Kitchen lights""#) }, "\(online.stdout.lines)")
        #expect(!(online.stdout.lines + online.stderr.lines).joined().contains(Self.token))
    }

    @Test func saysWhichGivenIdsHomeAssistantLacks() async throws {
        let simulator = try HomeAssistantSimulator(token: Self.token)
        defer { simulator.stop() }
        await simulator.setState("sensor.washer_status", "idle")
        let tokenFile = try temporaryFile(Self.token + "\n")
        let watch = try Subprocess(["watch", "--url", simulator.url, "--token-file", tokenFile, "sensor.washer_status", "sensor.washer_staus"])
        #expect(await watch.stderr.wait { $0.contains("livebridge watch: sensor.washer_staus is not an entity in Home Assistant (did you mean sensor.washer_status?)") })
        watch.signal(SIGTERM)
        #expect(await watch.exitStatus() == 0)
    }

    @Test func reconnectsByItselfAfterTheSocketDrops() async throws {
        let simulator = try HomeAssistantSimulator(token: Self.token)
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        let watch = try Subprocess(["watch", "--url", simulator.url, "sensor.a"], environment: ["LIVEBRIDGE_HA_TOKEN": Self.token])
        #expect(await watch.stdout.wait { $0.count == 1 })
        await simulator.dropConnections()
        #expect(await watch.stderr.wait { $0.filter { $0.contains("ready:") }.count == 2 })
        await simulator.setState("sensor.a", "2")
        #expect(await watch.stdout.wait { $0.last?.contains(#""state":"2""#) == true })
        watch.signal(SIGINT)
        #expect(await watch.exitStatus() == 0)
    }

    @Test func aRejectedTokenExitsOneAfterASingleAttempt() async throws {
        let simulator = try HomeAssistantSimulator(token: Self.token)
        defer { simulator.stop() }
        let watch = try Subprocess(["watch", "--url", simulator.url, "sensor.a"], environment: ["LIVEBRIDGE_HA_TOKEN": "wrong-9c2d"])
        #expect(await watch.exitStatus() == 1)
        #expect(watch.stderr.lines.contains { $0.contains("Home Assistant rejected the access token") })
        #expect(!watch.stderr.lines.joined().contains("wrong-9c2d"))
        #expect(simulator.record.authAttempts == 1)
    }

    @Test(arguments: [
        (["watch", "sensor.a"], "--url is required"),
        (["watch", "--url", "ws://127.0.0.1:1", "--token-file", "/nonexistent/token", "sensor.a"], "cannot read the token file /nonexistent/token"),
        (["watch", "--url", "ws://127.0.0.1:1", "--token-file", emptyFile, "sensor.a"], "the token file \(emptyFile) is empty"),
        (["watch", "--url", "ws://127.0.0.1:1", "Sensor A"], "\"Sensor A\" is not an entity id"),
        (["watch", "--url", "ws://127.0.0.1:1", "--bogus", "sensor.a"], "unknown option --bogus"),
        (["frobnicate"], "unknown command \"frobnicate\""),
    ])
    func badCommandLinesSayWhatIsWrongAndExitTwo(arguments: [String], message: String) async throws {
        let watch = try Subprocess(arguments, environment: ["LIVEBRIDGE_HA_TOKEN": ""])
        #expect(await watch.exitStatus() == 2)
        #expect(watch.stderr.lines.joined(separator: "\n").contains(message), "\(watch.stderr.lines)")
    }

    @Test func aBadURLIsReportedPlainly() async throws {
        let watch = try Subprocess(["watch", "--url", "ftp://x", "sensor.a"], environment: ["LIVEBRIDGE_HA_TOKEN": "t"])
        #expect(await watch.exitStatus() == 1)
        #expect(watch.stderr.lines.first == "livebridge watch: invalid Home Assistant URL \"ftp://x\": unsupported scheme \"ftp\"; expected ws, wss, http or https")
    }
}

let emptyFile = try! temporaryFile("")

func temporaryFile(_ contents: String, suffix: String = "") throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-\(UUID().uuidString)\(suffix)").path
    try contents.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// Lines a subprocess wrote, with a way to wait for them.
final class LineCollector: Sendable {
    private struct Waiter {
        let predicate: @Sendable ([String]) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var lines: [String] = []
        var partial: [UInt8] = []
        var closed = false
        var waiters: [UUID: Waiter] = [:]
    }

    private let state = Locked(State())

    var lines: [String] { state.withLock { $0.lines } }

    /// Adds output; empty data means the stream closed.
    func append(_ data: Data) {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if data.isEmpty { s.closed = true }
            for byte in data {
                if byte == 10 {
                    s.lines.append(String(decoding: s.partial, as: UTF8.self))
                    s.partial = []
                } else {
                    s.partial.append(byte)
                }
            }
            let lines = s.lines, closed = s.closed
            let done = s.waiters.filter { closed || $0.value.predicate(lines) }
            for key in done.keys { s.waiters[key] = nil }
            return done.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until `predicate` holds for the lines so far, the stream closes, or `timeout` passes;
    /// returns whether the predicate holds.
    func wait(timeout: Duration = .seconds(30), until predicate: @escaping @Sendable ([String]) -> Bool) async -> Bool {
        let key = UUID()
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.state.withLock { $0.waiters.removeValue(forKey: key) }?.continuation.resume()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.closed || predicate(s.lines) { return true }
                s.waiters[key] = Waiter(predicate: predicate, continuation: continuation)
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
        return predicate(lines)
    }

    /// Waits for the stream to close; false on timeout.
    func waitForClose(timeout: Duration) async -> Bool {
        _ = await wait(timeout: timeout) { _ in false }
        return state.withLock { $0.closed }
    }
}

/// `livebridge` run from the build folder, its stdout and stderr collected line by line.
final class Subprocess: Sendable {
    let process: ChildProcess
    let stdout = LineCollector()
    let stderr = LineCollector()

    /// The livebridge binary beside the test bundle.
    static var livebridge: URL {
        get throws {
            URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                .deletingLastPathComponent().appendingPathComponent("livebridge")
        }
    }

    /// `asNobody`: run as user and group 65534 through setpriv (the test must be root). `program`: run that instead
    /// of livebridge (a script that runs it).
    init(_ arguments: [String], environment: [String: String] = [:], asNobody: Bool = false, program: String? = nil) throws {
        let executable = try program ?? Self.livebridge.path
        let (path, all) = asNobody
            ? ("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", executable] + arguments)
            : (executable, arguments)
        process = try ChildProcess(path, all, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                   standardOutput: .pipe, standardError: .pipe)
        // One blocking reader thread per pipe: each chunk as it comes, then an empty chunk at end of file.
        for (descriptor, collector) in [(process.standardOutput!, stdout), (process.standardError!, stderr)] {
            Thread.detachNewThread { [process] in
                ChildProcess.readChunks(of: descriptor) { collector.append(Data($0)) }
                withExtendedLifetime(process) {}
            }
        }
    }

    func signal(_ number: Int32) { process.signal(number) }

    /// The exit status once the process has exited and its output is read; nil if it is still running after 15 s.
    func exitStatus() async -> Int32? {
        guard await stderr.waitForClose(timeout: .seconds(15)), await stdout.waitForClose(timeout: .seconds(5)) else {
            process.signal(SIGTERM)
            return nil
        }
        return process.wait()
    }
}
