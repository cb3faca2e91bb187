import Foundation
import JSON
import HomeAssistantSimulator
import Platform
import Synchronization
import Testing
@testable import WebSocketTransport
@testable import LiveBridge

/// The daemon's service in memory, driven as `livebridge run` drives it: signals in, graceful shutdown out.
struct ServiceLifecycleTests {
    /// The service, the log lines so far, and the log as it comes (to wait for a line instead of polling).
    func service(homeAssistant url: String, token: String = "t", backendToken: String = "a") throws -> (LiveBridgeService, Locked<[String]>, AsyncStream<String>) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-service-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try """
            homeassistant: { url: \(url), token: \(token) }
            backends: { aivi: { type: aivi, token: \(backendToken), base_url: "http://127.0.0.1:9" } }
            activities:
              washer:
                active_when: "{{ is_state('sensor.washer', 'running') }}"
                template: generic
                progress: 0.5
            """.write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
        let lines = Locked<[String]>([])
        let (log, logged) = AsyncStream.makeStream(of: String.self)
        let logger = Logger(level: .info) { line in
            lines.withLock { $0.append(line) }
            logged.yield(line)
        }
        return (try LiveBridgeService(options: .init(configPath: folder + "/rules.yaml", dataDirectory: folder + "/data"), logger: logger), lines, log)
    }

    /// The service running under `ServiceRunner` against `simulator`, once it has subscribed: its log lines, the
    /// signals it reads and its run.
    func running(against simulator: HomeAssistantSimulator) async throws
        -> (lines: Locked<[String]>, send: AsyncStream<UnixSignal>.Continuation, run: Task<Void, any Error>) {
        await simulator.setStates([("sensor.washer", "idle", [:])])
        let (service, lines, _) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let run = Task { try await ServiceRunner.run(service, signals: signals) }
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 1 })
        return (lines, send, run)
    }

    /// The service hands the logger the rules' tokens (Home Assistant's and each backend's): a libwebsockets line
    /// quoting one shows it masked.
    @Test func libraryLinesAreClearedOfTheServicesTokens() async throws {
        let (service, lines, _) = try service(homeAssistant: "ws://127.0.0.1:9/api/websocket", token: "llat-home-assistant-0123456789",
                                              backendToken: "aivi-backend-0123456789")
        let logger = await service.logger
        LibWebSocketsLog.emit(level: 1, line: "sent llat-home-assistant-0123456789 and aivi-backend-0123456789", to: logger.libraryLogHandler)
        let logged = lines.withLock { $0 }.joined()
        #expect(!logged.contains("0123456789") && logged.contains("sent"), "\(logged)")
    }

    @Test func terminateClosesTheSocketAndReturns() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        let (lines, send, running) = try await running(against: simulator)
        send.yield(.terminate)
        try await running.value
        #expect(await simulator.wait { $0.openConnections == 0 })
        #expect(lines.withLock { $0.contains { $0.contains("msg=\"stopping: sending what is due\"") } })
    }

    @Test func terminateBeforeTheServiceIsUpEndsItCleanly() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        let (service, _, _) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        send.yield(.terminate)
        try await ServiceRunner.run(service, signals: signals)
        #expect(await simulator.wait { $0.openConnections == 0 })
    }

    @Test(.timeLimit(.minutes(1))) func aRejectedTokenIsThrownOnceTheServiceIsStopped() async throws {
        let simulator = try HomeAssistantSimulator(token: "another")
        defer { simulator.stop() }
        let (service, lines, log) = try service(homeAssistant: simulator.url)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals) }
        // The service has taken the rejection in (the simulator closing its side was not enough: a stop could come
        // first, and the service ended as stopped, not rejected — twice in twelve runs).
        for await line in log where line.contains("Home Assistant rejected the access token") { break }
        send.yield(.terminate)
        await #expect(throws: LiveBridgeService.TokenRejectedError.self) { try await running.value }
        #expect(lines.withLock { $0.contains { $0.contains("Home Assistant rejected the access token") } })
    }

    /// A bad blueprint event is told to Home Assistant (persistent_notification.create); Home Assistant goes silent
    /// before answering. SIGTERM then should still end the service without waiting out the command (the pending
    /// command is cancelled with the followers).
    @Test(.timeLimit(.minutes(1))) func terminateWhileABlueprintProblemIsToldToASilentHomeAssistant() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        let (lines, send, running) = try await running(against: simulator)
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_events").contains { $0.message["event_type"] == "livebridge_activity" } })
        await simulator.setUnresponsive(true)
        await simulator.fireEvent("livebridge_activity", data: ["payload": ["template": "generic"]])
        // The notification of the bad event has reached Home Assistant, which will not answer it.
        #expect(await simulator.wait { $0.unanswered >= 1 })
        #expect(lines.withLock { $0.contains { $0.contains("invalid livebridge_activity event") } })
        let clock = ContinuousClock()
        let started = clock.now
        send.yield(.terminate)
        try await running.value
        let took = clock.now - started
        // Alone it takes well under a second; under ThreadSanitizer beside every suite, CI measured 9.7 s. Waiting out the
        // silent Home Assistant would take its request timeout, 30 s.
        #expect(took < .seconds(20), "SIGTERM took \(took) to end run()")
    }

    /// Cancelled (not shut down gracefully) while its push is being retried — the backend refuses connections — the
    /// service returns at once, sending nothing more.
    @Test(.timeLimit(.minutes(1))) func cancellingTheRunnerWithAPushBeingRetriedReturnsAtOnce() async throws {
        let simulator = try HomeAssistantSimulator(token: "t")
        defer { simulator.stop() }
        await simulator.setStates([("sensor.washer", "running", [:])])
        let (service, lines, log) = try service(homeAssistant: simulator.url)
        let (signals, _) = AsyncStream.makeStream(of: UnixSignal.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals) }
        for await line in log where line.contains("msg=push") && line.contains("outcome=retry") { break }
        let clock = ContinuousClock(), started = clock.now
        running.cancel()
        try await running.value
        // It hung for ever before; the socket's close takes up to 2 s, and ThreadSanitizer beside every suite slows the rest.
        #expect(clock.now - started < .seconds(20), "\(clock.now - started)")
        #expect(lines.withLock { $0.contains { $0.contains("stopping at once (cancelled)") } })
    }
}
