import HomeAssistant
import JSON
@testable import LiveBridge
import Testing

/// What the service evaluates before it has taken Home Assistant's current states (`FreshStatesGate`).
struct FreshStatesGateTests {
    @Test func theTickWaitsForTheFirstSnapshot() {
        var gate = FreshStatesGate()
        #expect(!gate.statesKnown, "no states yet: a restored activity reading the time would end")
        _ = gate.tookSnapshot(count: 1, connectionCount: 1).kept
        #expect(gate.statesKnown)
        #expect(gate.snapshotsTaken == 1)
    }

    @Test func renderingsBeforeTheSnapshotIsTakenAreKeptNewestPerTemplateInFirstOrder() {
        var gate = FreshStatesGate()
        let before = [gate.admit(.result(true), of: "a", phase: .subscribing, snapshotCount: 0),
                      gate.admit(.result(1), of: "b", phase: .waitingForStartup, snapshotCount: 0),
                      gate.admit(.result(false), of: "a", phase: .ready, snapshotCount: 1)]
        #expect(before == [false, false, false], "ready, but the snapshot not taken: kept too")
        let kept = gate.tookSnapshot(count: 1, connectionCount: 1).kept
        #expect(kept.map(\.source) == ["a", "b"])
        #expect(kept.map(\.rendering) == [.result(false), .result(1)])
        let current = gate.admit(.result(true), of: "a", phase: .ready, snapshotCount: 1)
        #expect(current, "current: evaluated at once")
        let again = gate.tookSnapshot(count: 1, connectionCount: 1).kept
        #expect(again.isEmpty, "handed over once")
    }

    @Test func aReconnectionKeepsRenderingsAgainUntilItsSnapshotIsTaken() {
        var gate = FreshStatesGate()
        _ = gate.tookSnapshot(count: 1, connectionCount: 1).kept
        for phase in [ConnectionPhase.disconnected, .connecting, .authenticating, .waitingForStartup, .subscribing] {
            let admitted = gate.admit(.failure("starting"), of: "a", phase: phase, snapshotCount: 1)
            #expect(!admitted, "\(phase)")
        }
        let admitted = gate.admit(.result("x"), of: "a", phase: .ready, snapshotCount: 2)
        #expect(!admitted)
        let kept = gate.tookSnapshot(count: 2, connectionCount: 2).kept
        #expect(kept.map(\.rendering) == [.result("x")])
        #expect(gate.isCurrent(phase: .ready, snapshotCount: 2))
    }

    /// A socket's first snapshot begins a restart grace; a reload's re-subscription on the same socket begins none.
    @Test func onlyAConnectionsSnapshotBeginsAGrace() {
        var gate = FreshStatesGate()
        let first = gate.tookSnapshot(count: 1, connectionCount: 1).beginsGrace
        let resubscribed = gate.tookSnapshot(count: 2, connectionCount: 1).beginsGrace
        let reconnected = gate.tookSnapshot(count: 3, connectionCount: 2).beginsGrace
        #expect([first, resubscribed, reconnected] == [true, false, true])
    }

    @Test func renderingsOfTemplatesNoLongerFollowedAreForgotten() {
        var gate = FreshStatesGate()
        _ = gate.admit(.result(1), of: "a", phase: .subscribing, snapshotCount: 0)
        _ = gate.admit(.result(2), of: "b", phase: .subscribing, snapshotCount: 0)
        gate.follow(only: ["b"])
        let kept = gate.tookSnapshot(count: 1, connectionCount: 1).kept
        #expect(kept.map(\.source) == ["b"])
    }
}
