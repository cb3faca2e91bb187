import HomeAssistant
import HomeAssistantSimulator
import JSON
import Testing

/// The connection as a child of its owner's task: up until cancelled, then closed; a one-shot command's connection
/// runs while the command's body does.
@Suite(.timeLimit(.minutes(1)))
struct ConnectionRunTests {
    @Test func itRunsUntilCancelledThenCloses() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setStates([("sensor.a", "1", [:])])
        let connection = try makeConnection(to: simulator, log: EventLog())
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connection.run(selection: ["sensor.a"]) }
            #expect(await connection.changes.next()?.isEmpty == false, "the entities came: it is up")
            #expect(await simulator.wait { $0.openConnections == 1 })
            group.cancelAll()
        }
        #expect(connection.currentPhase == .stopped)
        #expect(await simulator.wait { $0.openConnections == 0 })
    }

    @Test func aOneShotConnectionLivesWhileItsBodyRunsAndClosesWhenItThrows() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let connection = try makeConnection(to: simulator, log: EventLog())
        let state = try await connection.running { try await $0.getConfig()["state"] }
        #expect(state == "RUNNING")
        #expect(connection.currentPhase == .stopped, "closed when the body returned")
        struct Failed: Error {}
        let again = try makeConnection(to: simulator, log: EventLog())
        await #expect(throws: Failed.self) { try await again.running { _ in throw Failed() } }
        #expect(again.currentPhase == .stopped, "closed when the body threw")
        #expect(await simulator.wait { $0.openConnections == 0 })
    }

    @Test func cancelledBeforeItBeganItNeverConnects() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let connection = try makeConnection(to: simulator, log: EventLog())
        await withTaskGroup(of: Void.self) { group in
            group.cancelAll()
            group.addTask { await connection.run(selection: nil) }
        }
        #expect(connection.currentPhase == .stopped)
        #expect(simulator.record.connectionsAccepted == 0)
    }
}

extension ConnectionRunTests {
    /// Cancelled while it connects: it stops, and no socket stays open at Home Assistant.
    @Test(arguments: 0..<5) func cancelledWhileConnectingItStops(round: Int) async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connection.run(selection: nil) }
            for _ in 0..<round { await Task.yield() }
            group.cancelAll()
        }
        #expect(connection.currentPhase == .stopped, "\(log.lines)")
        #expect(await simulator.wait { $0.openConnections == 0 })
    }
}
