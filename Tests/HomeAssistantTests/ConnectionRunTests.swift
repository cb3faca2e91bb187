import HomeAssistant
import HomeAssistantSimulator
import Synchronization
import Testing

/// The connection as a child of its owner's task: up until cancelled, open while its owner drains, then closed.
@Suite(.timeLimit(.minutes(1)))
struct ConnectionRunTests {
    @Test func itRunsUntilCancelledAndClosesOnlyOnceDrained() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setStates([("sensor.a", "1", [:])])
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let phaseWhileDraining = Mutex<ConnectionPhase?>(nil)
        let running = Task {
            await connection.run(selection: ["sensor.a"]) {
                phaseWhileDraining.withLock { $0 = connection.currentPhase }
            }
        }
        #expect(await connection.changes.next()?.isEmpty == false, "the entities came: it is up")
        #expect(await simulator.wait { $0.openConnections == 1 })
        running.cancel()
        await running.value
        #expect(phaseWhileDraining.withLock { $0 } == .ready, "the socket was still open while the owner drained")
        #expect(connection.currentPhase == .stopped)
        #expect(await simulator.wait { $0.openConnections == 0 })
    }
}
