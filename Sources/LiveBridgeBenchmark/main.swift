import FakePushServices
import Foundation
import HTTPClient
import HomeAssistantSimulator
import JSON
import ProcessMeasurement
import WebSocketTransport

// make bench: the simulator drives `livebridge run` (a real subprocess, release build) with a fake backend.
// Scenarios: start-up with 5,000 entities; a flood on 50 entities read by 200 activities; a 32 MiB snapshot.

let arguments = CommandLine.arguments
let livebridge = arguments.count > 1 ? arguments[1] : ".build/release/livebridge"
let floodChanges = arguments.count > 2 ? Int(arguments[2]) ?? 100_000 : 100_000
let resultsPath = arguments.count > 3 ? arguments[3] : "bench/results.json"
let token = "bench-token"
/// The longest any daemon of this run took to exit after SIGTERM, in seconds.
nonisolated(unsafe) var slowestExit = 0.0

/// `livebridge run` with a rules file, its log lines timestamped as they arrive.
final class Daemon: @unchecked Sendable {
    let process: ChildProcess
    private let lock = NSLock()
    private var lines: [(at: Double, text: String)] = []

    init(rules: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-bench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        // Port 0: a free port the daemon takes and names (`statusPort`).
        try ("status: { listen: 127.0.0.1:0 }\n" + rules).write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        process = try ChildProcess(livebridge, ["run", "--config", folder + "/rules.yaml", "--data-dir", folder + "/data", "--log-level", "info"],
                                   standardOutput: .null, standardError: .pipe)
        let descriptor = process.standardError!
        Thread.detachNewThread { [self] in
            var partial = Data()
            ChildProcess.readChunks(of: descriptor) { chunk in
                partial.append(contentsOf: chunk)
                while let newline = partial.firstIndex(of: 10) {
                    let line = String(decoding: partial[partial.startIndex..<newline], as: UTF8.self)
                    partial.removeSubrange(partial.startIndex...newline)
                    let now = Date().timeIntervalSince1970
                    lock.withLock { lines.append((now, line)) }
                }
            }
        }
    }

    func firstLine(containing text: String, timeout: Double = 60) -> (at: Double, text: String)? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let line = lock.withLock({ lines.first { $0.text.contains(text) } }) { return line }
            usleep(2_000)
        }
        return nil
    }

    var probe: ProcessProbe { ProcessProbe(pid: process.pid) }

    /// The status listener's port, from the daemon's `status listener` line; nil until it has said.
    var statusPort: Int? {
        guard let line = firstLine(containing: "msg=\"status listener\" url=http://127.0.0.1:")?.text,
              let start = line.range(of: "url=http://127.0.0.1:")?.upperBound else { return nil }
        return Int(line[start...].prefix { $0.isNumber })
    }

    func metric(_ name: String) async -> Double {
        guard let port = statusPort,
              let response = try? await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/metrics")) else { return -1 }
        let line = response.bodyText.split(separator: "\n").first { $0.hasPrefix(name + " ") } ?? ""
        return Double(line.split(separator: " ").last ?? "") ?? -1
    }

    /// SIGTERM, and how long the daemon took to exit (the README promises 5 s).
    func stop() {
        guard process.statusIfExited() == nil else { return }
        let start = Date()
        process.signal(SIGTERM)
        process.wait()
        let seconds = Date().timeIntervalSince(start)
        slowestExit = max(slowestExit, seconds)
        if seconds > 5 { print(String(format: "  the daemon took %.1f s to exit after SIGTERM (more than the documented 5 s)", seconds)) }
    }
}

/// Log lines carry `time=…`: the daemon's own clock for auth_ok → ready.
func logTime(_ line: String) -> Double? {
    guard let range = line.range(of: "time=") else { return nil }
    let stamp = line[range.upperBound...].prefix { $0 != " " }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: String(stamp))?.timeIntervalSince1970
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

var results: [String: JSONValue] = [:]

// MARK: Start-up

@MainActor func startup(entities: Int, padding: Int, name: String) async throws {
    let simulator = try HomeAssistantSimulator(token: token)
    defer { simulator.stop() }
    var batch: [(entityID: String, state: String, attributes: [String: JSONValue])] = []
    for n in 0..<entities {
        batch.append(("sensor.bench_\(n)", String(n), ["friendly_name": .string("Bench \(n)"), "unit_of_measurement": "%"]))
    }
    await simulator.setStates(batch)
    if padding > 0 { await simulator.addPadding(totalBytes: padding, count: 32) }
    let ids = (0..<entities).map { "sensor.bench_\($0)" } + (padding > 0 ? (0..<32).map { "sensor.padding_\($0)" } : [])
    // One activity reading every entity of the snapshot, so the rules subscribe to all of them: a list of them (a
    // chain of 5,000 operators is beyond the 100 levels a template may nest).
    let reads = "[" + ids.map { "states('\($0)')" }.joined(separator: ", ") + "]"
    let rules = """
        homeassistant: { url: \(simulator.url), token: \(token) }
        backends: { aivi: { type: aivi, token: t, base_url: "http://127.0.0.1:9" } }
        activities:
          all:
            active_when: "{{ false and (\(reads) | length == 0) }}"
            template: generic
            progress: 0
        """
    let daemon = try Daemon(rules: rules)
    defer { daemon.stop() }
    guard let auth = daemon.firstLine(containing: "msg=\"authenticated"), let ready = daemon.firstLine(containing: "msg=\"ready:") else {
        print("\(name): the daemon did not get ready"); return
    }
    let readyMs = ((logTime(ready.text) ?? ready.at) - (logTime(auth.text) ?? auth.at)) * 1000
    try await Task.sleep(for: .milliseconds(500))
    if let hold = ProcessInfo.processInfo.environment["LIVEBRIDGE_BENCH_HOLD"].flatMap(Double.init) { try await Task.sleep(for: .seconds(hold)) }
    let memory = daemon.probe.memory
    // LIVEBRIDGE_BENCH_SMAPS=folder keeps the daemon's memory map per scenario, for finding where the pages go.
    if let folder = ProcessInfo.processInfo.environment["LIVEBRIDGE_BENCH_SMAPS"] {
        // /proc files report size 0: read them to the end rather than copy them.
        let smaps = FileHandle(forReadingAtPath: "/proc/\(daemon.process.pid)/smaps")?.readDataToEndOfFile()
        _ = FileManager.default.createFile(atPath: folder + "/\(name).smaps", contents: smaps)
    }
    print(String(format: "%@: ready %.0f ms after auth_ok; RSS %.1f MiB (%.1f MiB its own, %.1f MiB mapped files; peak %.1f MiB)", name, readyMs,
                 memory.rss, memory.anonymous, memory.file, memory.peak))
    results[name] = ["ready_ms": .double((readyMs * 10).rounded() / 10), "rss_mib": .double((memory.rss * 10).rounded() / 10),
                     "anonymous_rss_mib": .double((memory.anonymous * 10).rounded() / 10),
                     "peak_rss_mib": .double((memory.peak * 10).rounded() / 10)]
}

// MARK: Flood

/// `noise`: the share of changes on entities no rule reads (all of them reach LiveBridge on the state_changed path).
/// `minInterval`: the per-activity budget; 0s pushes whenever the previous push is answered.
/// `paced`: changes per second the simulator sends at (nil: as fast as it can).
@MainActor func flood(changes: Int, name: String = "flood", source: String = "subscribe_entities", noise: Double = 0, minInterval: String = "0s",
                      paced: Double? = nil, coalesces: Bool = true) async throws {
    var options = HomeAssistantSimulator.Options(token: token)
    options.coalesces = coalesces
    let simulator = try HomeAssistantSimulator(options: options)
    defer { simulator.stop() }
    let backend = try FakePushService(acceptsAnyToken: true)
    let entities = 50, activities = 200
    await simulator.setStates((0..<entities).map { ("sensor.flood_\($0)", "0", [:]) })
    await simulator.setStates((0..<1000).map { ("sensor.noise_\($0)", "0", [:]) })
    var rules = """
        homeassistant: { url: \(simulator.url), token: \(token), entity_source: \(source) }
        backends: { aivi: { type: aivi, token: t, base_url: \(backend.baseURL) } }
        defaults: { backend: aivi, debounce: 0s, max_wait: 0s, min_interval: \(minInterval), max_updates_per_hour: unlimited }
        activities:

        """
    for n in 0..<activities {
        let entity = "sensor.flood_\(n % entities)"
        rules += """
              a\(n):
                active_when: "{{ has_value('\(entity)') }}"
                template: generic
                progress: "{{ (states('\(entity)') | float(0) % 100) / 100 }}"
                state: "{{ state_attr('\(entity)', 't') }}"

            """
    }
    let daemon = try Daemon(rules: rules)
    defer { daemon.stop() }
    guard daemon.firstLine(containing: "msg=\"ready:") != nil else { print("\(name): the daemon did not get ready"); return }
    _ = await backend.wait(timeout: .seconds(30)) { $0.count >= activities }
    let startCPU = daemon.probe.cpuSeconds
    let baseline = await daemon.metric("livebridge_state_changes_total")
    let rendersBefore = await daemon.metric("livebridge_renders_total")
    let pushesBefore = backend.requests.count
    let start = Date().timeIntervalSince1970
    var sent = 0
    var relevant = 0
    let noiseEvery = noise > 0 ? max(1, Int((1 / (1 - noise)).rounded())) : 0
    while sent < changes {
        let count = min(500, changes - sent)
        let batch: [(entityID: String, state: String, attributes: [String: JSONValue])] = (0..<count).map { i in
            let n = sent + i
            if noiseEvery > 0 && n % noiseEvery != 0 { return ("sensor.noise_\(n % 1000)", String(n), [:]) }
            relevant += 1
            return ("sensor.flood_\(n % entities)", String(n), [:])
        }
        await simulator.setStates(batch, stamp: true)
        sent += count
        if let paced {
            let due = start + Double(sent) / paced
            let wait = due - Date().timeIntervalSince1970
            if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
        }
    }
    var received = 0.0
    let deadline = Date().addingTimeInterval(120)
    while received < baseline + Double(relevant), Date() < deadline {
        try await Task.sleep(for: .milliseconds(20))
        received = await daemon.metric("livebridge_state_changes_total")
    }
    let elapsed = Date().timeIntervalSince1970 - start
    // A budgeted update still waiting goes within min_interval: wait it out before counting.
    try await Task.sleep(for: .milliseconds(minInterval == "0s" ? 500 : 1_500))
    let renders = Int(await daemon.metric("livebridge_renders_total") - rendersBefore)
    let pushes = backend.requests.count - pushesBefore
    let cpu = daemon.probe.cpuSeconds - startCPU
    let memory = daemon.probe.memory
    let latencies = backend.requests.compactMap { request -> Double? in
        guard let stamp = request.body?["content"]?["state"]?.stringValue, let t = Double(stamp), t > start else { return nil }
        return (request.at - t) * 1000
    }
    let rate = Double(changes) / elapsed
    print(String(format: "%@ (%@, %.0f%% noise%@): %d changes, %d on %d entities read by %d activities: %.0f changes/s sustained; %.2f CPU s per 100,000 changes; "
                 + "RSS %.1f MiB (%.1f MiB its own; peak %.1f MiB); %d pushes, %d payloads rendered; change → backend p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                 name, source, noise * 100, paced.map { String(format: ", paced at %.0f/s", $0) } ?? "", changes, relevant, entities, activities, rate,
                 cpu / Double(changes) * 100_000, memory.rss, memory.anonymous, memory.peak, pushes, renders,
                 percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.max() ?? 0))
    results[name] = ["changes_per_s": .double(rate.rounded()), "relevant_changes_per_s": .double((Double(relevant) / elapsed).rounded()), "cpu_s_per_100k": .double((cpu / Double(changes) * 100_000 * 100).rounded() / 100),
                        "rss_mib": .double((memory.rss * 10).rounded() / 10), "peak_rss_mib": .double((memory.peak * 10).rounded() / 10),
                        "anonymous_rss_mib": .double((memory.anonymous * 10).rounded() / 10), "pushes": .int(pushes), "renders": .int(renders), "latency_p50_ms": .double((percentile(latencies, 0.5) * 100).rounded() / 100),
                        "latency_p99_ms": .double((percentile(latencies, 0.99) * 100).rounded() / 100),
                        "latency_max_ms": .double(((latencies.max() ?? 0) * 100).rounded() / 100)]
}

// MARK: Latency, paced

@MainActor func latency(changes: Int) async throws {
    let simulator = try HomeAssistantSimulator(token: token)
    defer { simulator.stop() }
    let backend = try FakePushService(acceptsAnyToken: true)
    await simulator.setStates([("sensor.paced", "0", [:])])
    let rules = """
        homeassistant: { url: \(simulator.url), token: \(token) }
        backends: { aivi: { type: aivi, token: t, base_url: \(backend.baseURL) } }
        defaults: { backend: aivi, debounce: 0s, max_wait: 0s, min_interval: 0s, max_updates_per_hour: unlimited }
        activities:
          paced:
            active_when: "{{ has_value('sensor.paced') }}"
            template: generic
            progress: 0.5
            state: "{{ state_attr('sensor.paced', 't') }}"
        """
    let daemon = try Daemon(rules: rules)
    defer { daemon.stop() }
    guard daemon.firstLine(containing: "msg=\"ready:") != nil else { print("latency: the daemon did not get ready"); return }
    _ = await backend.wait(timeout: .seconds(30)) { $0.count >= 1 }
    let start = Date().timeIntervalSince1970
    for n in 1...changes {
        await simulator.setStates([("sensor.paced", String(n), [:])], stamp: true)
        try await Task.sleep(for: .milliseconds(5))
    }
    _ = await backend.wait(timeout: .seconds(30)) { $0.count >= changes }
    let latencies = backend.requests.compactMap { request -> Double? in
        guard let stamp = request.body?["content"]?["state"]?.stringValue, let t = Double(stamp), t > start else { return nil }
        return (request.at - t) * 1000
    }
    print(String(format: "latency: %d paced changes (one every 5 ms, debounce 0): %d pushes; change → backend p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                 changes, latencies.count, percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.max() ?? 0))
    results["latency"] = ["pushes": .int(latencies.count), "p50_ms": .double((percentile(latencies, 0.5) * 100).rounded() / 100),
                          "p99_ms": .double((percentile(latencies, 0.99) * 100).rounded() / 100),
                          "max_ms": .double(((latencies.max() ?? 0) * 100).rounded() / 100)]
}

// LIVEBRIDGE_BENCH=flood,latency runs only those scenarios (for profiling one of them); the results file is then left alone.
let only = ProcessInfo.processInfo.environment["LIVEBRIDGE_BENCH"].map { Set($0.split(separator: ",").map(String.init)) }
func wanted(_ name: String) -> Bool { only?.contains(name) ?? true }
// The fixed cost: the runtime, the C libraries and the loops, with one entity.
if wanted("startup_1_entity") { try await startup(entities: 1, padding: 0, name: "startup_1_entity") }
if wanted("startup_5000_entities") { try await startup(entities: 5_000, padding: 0, name: "startup_5000_entities") }
if wanted("latency") { try await latency(changes: 1_000) }
if wanted("flood") { try await flood(changes: floodChanges) }
// The same flood with a phone's budget (one push per activity per second): the cost of taking in changes, not of pushing.
if wanted("flood_min_interval_1s") { try await flood(changes: floodChanges, name: "flood_min_interval_1s", minInterval: "1s") }
// Equal work with the Python bridge of issue 15: paced at 25,000 changes/s, one push per activity per second.
if wanted("equal_work") { try await flood(changes: floodChanges, name: "equal_work", minInterval: "1s", paced: 25_000) }
// The same against a server that sends every message in a frame of its own (no `coalesce_messages`).
if wanted("equal_work_uncoalesced") {
    try await flood(changes: floodChanges, name: "equal_work_uncoalesced", minInterval: "1s", paced: 25_000, coalesces: false)
}
if wanted("flood_state_changed") { try await flood(changes: floodChanges, name: "flood_state_changed", source: "state_changed", noise: 0.95) }
if wanted("snapshot_32_mib") { try await startup(entities: 100, padding: 32 << 20, name: "snapshot_32_mib") }

print(String(format: "shutdown: the slowest exit after SIGTERM took %.2f s", slowestExit))
results["shutdown"] = ["slowest_exit_s": .double((slowestExit * 100).rounded() / 100)]
// Compare with the kept results, then keep these.
let previous = (FileManager.default.contents(atPath: resultsPath)).flatMap { try? JSONParser.parse(Array($0)) }
if let previous {
    for (scenario, figures) in results.sorted(by: { $0.key < $1.key }) {
        for (key, value) in (figures.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let now = value.doubleValue, let before = previous[scenario]?[key]?.doubleValue, before != 0 else { continue }
            print(String(format: "  %@.%@: %.1f → %.1f (%+.0f%%)", scenario, key, before, now, (now - before) / before * 100))
        }
    }
}
if only == nil {
    try? FileManager.default.createDirectory(atPath: (resultsPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try JSONValue.object(results).jsonText.write(toFile: resultsPath, atomically: true, encoding: .utf8)
    print("results kept in \(resultsPath)")
}
exit(0)
