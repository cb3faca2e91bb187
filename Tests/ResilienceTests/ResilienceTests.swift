import Dispatcher
import Foundation
import HTTPClient
import HomeAssistant
import ConnectionTestSupport
import HomeAssistantSimulator
import JSON
import Rules
import Testing
import LiveActivity
import ProcessMeasurement

/// Faults LiveBridge must survive. Each case says what must hold and checks it. (`make resilience`)
@Suite(.timeLimit(.minutes(2)))
struct ResilienceTests {
    /// A repeatable stream of pseudo-random numbers, so a failure can be replayed.
    typealias Seeded = SeededRandom

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Holds: every mutated rules file loads or gives errors with a position — never a crash or a hang.
    @Test func fiveThousandMutatedRulesFilesEachLoadOrFailCleanly() throws {
        let original = Array(try String(contentsOf: Self.repository.appendingPathComponent("config/livebridge.example.yaml"), encoding: .utf8).utf8)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-mutants-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "ha_token: t\naivi_token: a\n".write(toFile: folder + "/secrets.yaml", atomically: true, encoding: .utf8)
        var random = Seeded(state: 7)
        let alphabet = Array("{}[]:-'\"!#&*|>%@`, \n\t0aZ{{}}".utf8)
        var loaded = 0, rejected = 0
        for _ in 0..<5_000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                }
            }
            _ = FileManager.default.createFile(atPath: folder + "/livebridge.yaml", contents: Data(bytes))
            switch RulesLoader.load(file: folder + "/livebridge.yaml", environment: [:]) {
            case .success: loaded += 1
            case .failure(let errors):
                rejected += 1
                #expect(!errors.errors.isEmpty)
                #expect(errors.errors.allSatisfy { $0.location.line >= 1 && $0.location.column >= 1 })
            }
        }
        #expect(loaded + rejected == 5_000)
        #expect(rejected > 1_000 && loaded > 100, "loaded \(loaded), rejected \(rejected)")
    }

    /// Holds: any status and body from a backend maps to an outcome; 2xx delivers, and no 4xx other than the documented ones is retried.
    @Test func fiveThousandMutatedBackendResponsesAreEachClassified() {
        var random = Seeded(state: 11)
        let bodies = [#"{"error":"FREE_TIER_JOB_LOCKED"}"#, #"{"error":"ACTIVITY_ALREADY_RUNNING"}"#, #"{"error":"#, "", "<html>", #"{"error":42}"#,
                      #"[{"error":"x"}]"#, String(repeating: "{", count: 600), #"{"error":"APNS_PUSH_FAILED","expiresAt":null}"#]
        for _ in 0..<5_000 {
            let status = Int.random(in: 100...599, using: &random)
            var body = Array(bodies.randomElement(using: &random)!.utf8)
            if !body.isEmpty, Bool.random(using: &random) { body[Int.random(in: 0..<body.count, using: &random)] = UInt8.random(in: 0...255, using: &random) }
            let headers = Bool.random(using: &random) ? ["retry-after": ["30", "-1", "soon", "1e309", ""].randomElement(using: &random)!] : [:]
            let kind = [PushKind.start, .update, .end].randomElement(using: &random)!
            let report = HTTPOutcome.classify(.success(HTTPResponse(status: status, headers: headers, body: body)), kind: kind, service: IslandPulseSchema.definition)
            switch status {
            case 200..<300: #expect(report.outcome == .delivered)
            case 429, 500..<600:
                if case .retry = report.outcome {} else { Issue.record("\(status) not retried") }
            case 409, 403:
                let code = (try? JSONParser.parse(body))?["error"]?.stringValue
                if status == 409, code == "ACTIVITY_ALREADY_RUNNING", kind == .start { #expect(report.outcome == .alreadyRunning) }
                else if status == 403, code == "FREE_TIER_JOB_LOCKED" { #expect({ if case .locked = report.outcome { true } else { false } }()) }
                else if case .rejected = report.outcome {} else { Issue.record("\(status) \(code ?? "-") → \(report.outcome)") }
            default:
                if case .rejected = report.outcome {} else { Issue.record("\(status) → \(report.outcome)") }
            }
        }
    }

    /// Holds: 10,000 malformed frames are ignored; the connection stays up and later changes still arrive.
    @Test func tenThousandMalformedFramesLeaveTheConnectionUp() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-resilience")
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        let warnings = WarningCount()
        let connection = try HomeAssistantConnection(configuration: try ConnectionConfiguration(url: simulator.url, token: AccessToken("llat-resilience"))) { event in
            if event.isError { warnings.add() }
        }
        let connectionRun = await connection.started(entityIDs: ["sensor.a"])
        _ = await connection.changes.next()
        var random = Seeded(state: 3)
        let shapes = ["{", "[1,", "{\"type\":", "\u{0}", "{\"id\":\"x\",\"type\":\"result\"}", "null", "[{\"type\":\"event\",\"id\":99999}]", "\"\\ud800\""]
        for _ in 0..<100 {
            for _ in 0..<100 { await simulator.sendRaw(shapes.randomElement(using: &random)! + String(Int.random(in: 0...9, using: &random))) }
        }
        await simulator.setState("sensor.a", "2")
        let next = await connection.changes.next()
        #expect(next?.first.map { if case .updated(let s) = $0 { s.state } else { "" } } == "2")
        #expect(connection.currentPhase == .ready)
        #expect(simulator.record.connectionsAccepted == 1)
        #expect(warnings.count > 0)
        await connectionRun.stop()
    }

    /// Holds: a 100 MiB message is dropped at the 64 MiB cap with a clear error, and the connection comes back.
    @Test func aHundredMebibyteFrameIsDroppedAndTheConnectionRecovers() async throws {
        let simulator = try HomeAssistantSimulator(token: "llat-resilience")
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        let errors = WarningCount()
        var configuration = try ConnectionConfiguration(url: simulator.url, token: AccessToken("llat-resilience"))
        configuration.reconnect = ReconnectPolicy(initial: .milliseconds(20), maximum: .milliseconds(100))
        let connection = try HomeAssistantConnection(configuration: configuration) { event in
            if case .warning(let text) = event, text.contains("over the 67108864-byte limit") { errors.add() }
        }
        let connectionRun = await connection.started(entityIDs: ["sensor.a"])
        _ = await connection.changes.next()
        await simulator.sendRaw("{\"type\":\"event\",\"id\":1,\"event\":{\"blob\":\"" + String(repeating: "z", count: 100 << 20) + "\"}}")
        await simulator.setState("sensor.a", "after")
        var seen = ""
        while seen != "after", let batch = await connection.changes.next() {
            for case .updated(let state) in batch where state.entityID == "sensor.a" { seen = state.state }
        }
        #expect(errors.count == 1)
        #expect(simulator.record.connectionsAccepted == 2)
        await connectionRun.stop()
    }

    /// Holds: a full data directory is a clear error (ENOSPC named), not a crash, and leaves no temporary file behind.
    @Test func aFullDataDirectoryIsAClearErrorNotACrash() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-full-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // A 16 KiB tmpfs, filled: every write fails with ENOSPC. (state.json's temporary file is created exclusively
        // and never through a link, so a link to /dev/full no longer stands in for a full disk.)
        func run(_ arguments: [String]) -> Int32 {
            (try? ChildProcess.run("/bin/" + arguments[0], Array(arguments.dropFirst())).status) ?? -1
        }
        guard getuid() == 0, run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", folder]) == 0 else {
            print("skipped: mounting a small tmpfs needs root")
            return
        }
        defer { _ = run(["umount", folder]) }
        let filler = open(folder + "/filler", O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 0, count: 512)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        let file = try DeliveryStateFile(directory: folder)
        do {
            try file.save(DeliveryState(entries: ["a@b": .init(running: true, digest: nil)]))
            Issue.record("a save to a full disk succeeded")
        } catch {
            #expect("\(error)".contains("No space left on device"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(!FileManager.default.fileExists(atPath: folder + "/.state.json.tmp"))
    }
}

final class WarningCount: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
