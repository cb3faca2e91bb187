import Dispatcher
import FakePushServices
import Foundation
import HTTPClient
import JSON
import LiveActivity
import Platform
import Testing

/// How often the state file is written: a start or an end at once, a new digest within the second, once for however
/// many came in it. The second's timer is held here, by a sleeper the test releases.
@Suite(.timeLimit(.minutes(1)))
struct StateFileSavesTests {
    /// Sleeps of half a second or more (the state file's second; not a lane's) held until the test releases them;
    /// shorter ones sleep as usual.
    final class HeldSleeper: Sleeper {
        private let held = Locked<[CheckedContinuation<Void, Never>]>([])
        private let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)

        func sleep(until deadline: ContinuousClock.Instant) async throws {
            guard ContinuousClock.now.duration(to: deadline) >= .milliseconds(500) else { return try await TaskSleeper().sleep(until: deadline) }
            await withCheckedContinuation { wake in
                held.withLock { $0.append(wake) }
                arrived.yield()
            }
        }

        var heldCount: Int { held.withLock(\.count) }

        func firstHeld() async { for await _ in arrivals { return } }

        func releaseAll() { for wake in held.withLock({ held in defer { held = [] }; return held }) { wake.resume() } }
    }

    /// Starts, each saved at once, between updates, each due within the second: one timer for the second, not one per
    /// update after a start (a burst of starts left a timer each, and every one saved again with an fsync as the next
    /// update came: 194 saves in the first second of `make bench`'s flood).
    @Test func startsBetweenUpdatesLeaveOneTimerForTheSecond() async throws {
        let service = try FakePushService()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-saves-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sleeper = HeldSleeper()
        let now = UpdateBudget(debounce: .zero, maxWait: .zero, minInterval: .zero)
        let dispatcher = Dispatcher(backends: [HTTPPushBackend(name: "aivi", service: AiviSchema.definition, baseURL: service.baseURL, token: "aivi-test-token", client: HTTPClient())],
                                    stateFile: try DeliveryStateFile(directory: directory), sleeper: sleeper)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        func request(_ slug: String, _ label: String) -> BackendRequest {
            BackendRequest(backend: "aivi", kind: .aivi, method: "PATCH", target: "/activity/\(slug)",
                           body: ["state": "ONGOING", "content": ["template": "generic", "progress": 0.5, "state": .string(label)]])
        }
        for n in 0..<5 {
            await dispatcher.submit(activity: "a\(n)", backend: "aivi", budget: now, .start(request("a\(n)", "started")))
            await dispatcher.waitUntilQuiet()
            await dispatcher.submit(activity: "a\(n)", backend: "aivi", budget: now, .change(request("a\(n)", "updated"), urgent: false))
            await dispatcher.waitUntilQuiet()
        }
        await sleeper.firstHeld()
        // One more push through the service: a timer asked for after the first would have been asked for by now.
        await dispatcher.submit(activity: "a0", backend: "aivi", budget: now, .change(request("a0", "again"), urgent: false))
        await dispatcher.waitUntilQuiet()
        #expect(service.requests.count == 11)
        #expect(sleeper.heldCount == 1)
        // The second is over: every update's digest is on disk.
        let before = try DeliveryStateFile(directory: directory).load { _ in }
        #expect(before.entries["a4@aivi"]?.digest != DeliveryState.digest(request("a4", "updated").bodyBytes))
        sleeper.releaseAll()
        #expect(await dispatcher.flush(deadline: .seconds(5)))
        let after = try DeliveryStateFile(directory: directory).load { _ in }
        #expect(after.entries["a0@aivi"]?.digest == DeliveryState.digest(request("a0", "again").bodyBytes))
        #expect(after.entries["a4@aivi"]?.digest == DeliveryState.digest(request("a4", "updated").bodyBytes))
    }
}
