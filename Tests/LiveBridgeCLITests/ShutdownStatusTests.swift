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
    @Test func healthIsAnsweredWhileTheShutdownFlushes() async throws {
        let port = try freePort()
        let s = try setup(statusPort: port)
        defer { s.simulator.stop() }
        // The start's push hangs for 20 s: the shutdown's flush waits its whole deadline (5 s).
        s.service.script([.init(status: 200, delay: .seconds(20))])
        await s.simulator.setState("sensor.washer_status", "running")
        let livebridge = try run(s)
        #expect(await s.service.wait { $0.count == 1 })
        let before = try await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz"))
        #expect(before.status == 200)
        livebridge.signal(SIGTERM)
        #expect(await livebridge.stderr.wait { $0.contains { $0.contains("stopping: sending what is due") } })
        let clock = ContinuousClock()
        let started = clock.now
        let answer: Int? = await withTaskGroup(of: Int?.self) { group in
            group.addTask { (try? await HTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/healthz")))?.status ?? -1 }
            group.addTask { try? await Task.sleep(for: .seconds(3)); return nil }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        let took = clock.now - started
        #expect(answer != nil && answer! > 0, "GET /healthz during the shutdown: \(String(describing: answer)) after \(took)")
        #expect(await livebridge.exitStatus() == 0)
    }
}
