import ProcessMeasurement
import FakePushServices
import Foundation
import HTTPClient
import HomeAssistantSimulator
import JSON
import Testing

/// The status listener while the daemon shuts down (the flush can take the whole
/// deadline while a push hangs). /healthz should still be answered (or refused at once), not left hanging.
extension RunCommandTests {
    /// Answers held a minute each, longer than the HTTP client's 15 s timeout: the retry after a timeout hangs too, so
    /// the push is still pending whenever a starved test process gets round to its signal.
    static let hangingAnswers = [FakePushService.Scripted](repeating: .init(status: 200, delay: .seconds(60)), count: 8)

    @Test func healthIsAnsweredWhileTheShutdownFlushes() async throws {
        let s = try setup(statusPort: 0)
        defer { s.simulator.stop() }
        // The start's push hangs for 60 s: the shutdown's flush waits its whole deadline, 30 s here so that the
        // request below falls inside it however slowly this test runs (ThreadSanitizer beside every suite once saw
        // the stopping line 3 s late, after a 5 s flush had ended).
        s.service.script(Self.hangingAnswers)
        await s.simulator.setState("sensor.washer_status", "running")
        let livebridge = try run(s, extra: ["--shutdown-deadline", "30"])
        let port = try #require(await statusPort(of: livebridge), "\(livebridge.stderr.lines.joined(separator: "\n"))")
        #expect(await s.service.wait { $0.count >= 1 })
        let before = try await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz"))
        #expect(before.status == 200)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("stopping: sending what is due") && $0.contains("30.0 seconds") } })
        let clock = ContinuousClock()
        let started = clock.now
        let answer: Int? = await withTaskGroup(of: Int?.self) { group in
            group.addTask { (try? await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz")))?.status ?? -1 }
            group.addTask { try? await Task.sleep(for: .seconds(20)); return nil }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        let took = clock.now - started
        #expect(answer != nil && answer! > 0,
                "GET /healthz during the shutdown: \(String(describing: answer)) after \(took)\n\(livebridge.stderr.lines.joined(separator: "\n"))")
        livebridge.signal(SIGTERM)  // the second signal: exit at once, not after the 30 s flush
        #expect(await livebridge.exitStatus() == 130)
    }

    /// `--shutdown-deadline` bounds the flush: with a push hanging for a minute, a 1 s deadline ends the daemon
    /// (status 0, the pending push said to resume next start) long before the push would have answered.
    @Test func theShutdownDeadlineBoundsTheFlush() async throws {
        let s = try setup(statusPort: 0)
        defer { s.simulator.stop() }
        s.service.script(Self.hangingAnswers)
        await s.simulator.setState("sensor.washer_status", "running")
        let livebridge = try run(s, extra: ["--shutdown-deadline", "1"])
        #expect(await s.service.wait { $0.count >= 1 })
        let clock = ContinuousClock()
        let started = clock.now
        livebridge.signal(SIGTERM)
        #expect(await livebridge.exitStatus() == 0)
        let took = clock.now - started
        #expect(took < .seconds(30), "the push hangs for 60 s: \(took)")
        #expect(livebridge.stderr.lines.contains { $0.contains("stopping: sending what is due") && $0.contains("1.0 seconds") })
        #expect(livebridge.stderr.lines.contains { $0.contains("stopping with pushes still pending") },
                "\(livebridge.stderr.lines.joined(separator: "\n"))")
    }
}
