import Dispatcher
import Foundation
import JSON
import LiveActivity
import Testing

/// Activities shown by Home Assistant's events: at most `eventBornLimit` at once, and forgotten (lane and state entry)
/// once they have ended, so a flood of made-up ids leaves nothing behind.
@Suite(.timeLimit(.minutes(1)))
struct EventBornLanesTests {
    final class Aivi: PushBackend, @unchecked Sendable {
        let name = "aivi"
        let allowsOneActiveJob = false
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport { DeliveryReport(.delivered) }
    }

    static func submission(_ id: String, _ kind: PushKind) -> Dispatcher.Submission {
        let request = BackendRequest.aivi(backend: "aivi", slug: id, kind: kind, content: ["template": "generic", "progress": 0.5])
        var submission = Dispatcher.Submission(activity: id, backend: "aivi", budget: UpdateBudget(),
                                               event: kind == .start ? .start(request) : kind == .end ? .end(request) : .change(request, urgent: false))
        submission.eventBorn = true
        return submission
    }

    @Test func startsPastTheLimitAreRefusedUntilOneEnds() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-events-\(UUID().uuidString)").path
        let dispatcher = Dispatcher(backends: [Aivi()], stateFile: try DeliveryStateFile(directory: directory), eventBornLimit: 2)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        #expect(await dispatcher.submit(Self.submission("a", .start)))
        #expect(await dispatcher.submit(Self.submission("b", .start)))
        #expect(await !dispatcher.submit(Self.submission("c", .start)), "a third activity at a limit of two")
        await dispatcher.waitUntilQuiet()
        #expect(await dispatcher.lanes.map(\.activity) == ["a", "b"])
        // An update for one that never started changes nothing and keeps nothing.
        #expect(await dispatcher.submit(Self.submission("ghost", .update)))
        #expect(await dispatcher.lanes.map(\.activity) == ["a", "b"])

        #expect(await dispatcher.submit(Self.submission("a", .end)))
        await dispatcher.waitUntilQuiet()
        #expect(await dispatcher.lanes.map(\.activity) == ["b"], "the ended lane is forgotten")
        #expect(await dispatcher.runningActivities.map(\.activity) == ["b"])
        let saved = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/state.json"))))
        #expect(saved["activities"]?.objectValue?.keys.sorted() == ["b@aivi"])
        #expect(await dispatcher.submit(Self.submission("c", .start)), "room again")
        await dispatcher.waitUntilQuiet()
        #expect(await dispatcher.lanes.map(\.activity) == ["b", "c"])
        #expect(await dispatcher.phase(activity: "c", target: "aivi") == .running)
    }

    /// Five thousand made-up ids, each started and ended: no lane and no state entry is left.
    @Test func aFloodOfIDsLeavesNothingBehind() async throws {
        let dispatcher = Dispatcher(backends: [Aivi()], eventBornLimit: 20)
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        for n in 0..<5_000 {
            await dispatcher.submit(Self.submission("id\(n)", .start))
            await dispatcher.submit(Self.submission("id\(n)", .end))
            if n % 500 == 0 { await dispatcher.waitUntilQuiet() }
        }
        await dispatcher.waitUntilQuiet()
        #expect(await dispatcher.lanes.isEmpty)
        #expect(await dispatcher.runningActivities.isEmpty)
    }

    /// A rule's activity is never forgotten: its lane keeps its budget's history.
    @Test func aRulesLaneStaysAfterItsEnd() async {
        let dispatcher = Dispatcher(backends: [Aivi()])
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        var start = Self.submission("washer", .start), end = Self.submission("washer", .end)
        (start.eventBorn, end.eventBorn) = (false, false)
        await dispatcher.submit(start)
        await dispatcher.waitUntilQuiet()
        await dispatcher.submit(end)
        await dispatcher.waitUntilQuiet()
        #expect(await dispatcher.lanes.map(\.activity) == ["washer"])
    }
}
