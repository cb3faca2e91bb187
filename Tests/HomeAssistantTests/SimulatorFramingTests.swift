import HomeAssistantSimulator
import JSON
import Platform
import Synchronization
import Testing
import WebSocketTransport
import FoundationEssentials

/// The simulator frames messages as Home Assistant's writer does: what one pass of its loop queued goes out as one
/// JSON array frame to a client that asked for `coalesce_messages`, and as a frame per message to one that did not.
struct SimulatorFramingTests {
    /// A bare client: authenticates, maybe asks for coalescing, subscribes, and keeps every frame as text.
    final class RawClient: WebSocketConnectionDelegate, @unchecked Sendable {
        let coalesce: Bool
        let frames = Locked<[String]>([])
        init(coalesce: Bool) { self.coalesce = coalesce }

        func connectionDidOpen(_ connection: WebSocketConnection) {}
        func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason) {}
        func connection(_ connection: WebSocketConnection, didReceive message: [UInt8]) {
            let text = String(decoding: message, as: UTF8.self)
            frames.withLock { $0.append(text) }
            if text.contains("\"auth_required\"") {
                connection.send(#"{"type":"auth","access_token":"\#(simulatorToken)"}"#)
            } else if text.contains("\"auth_ok\"") {
                if coalesce { connection.send(#"{"id":1,"type":"supported_features","features":{"coalesce_messages":1}}"#) }
                connection.send(#"{"id":2,"type":"subscribe_entities","entity_ids":["sensor.a","sensor.b","sensor.c"]}"#)
            }
        }
    }

    func framesOfABurst(coalesce: Bool) async throws -> [String] {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setStates(["sensor.a", "sensor.b", "sensor.c"].map { ($0, "1", [:]) })
        let loop = try WebSocketEventLoop(options: WebSocketEventLoop.Options())
        loop.start()
        defer { loop.shutdown() }
        let client = RawClient(coalesce: coalesce)
        let endpoint = WebSocketEndpoint(host: "127.0.0.1", port: simulator.port, path: "/api/websocket")
        loop.perform { [client] in _ = loop.connect(to: endpoint, delegate: client) }
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_entities").count == 1 })
        // The snapshot went out with the subscription's result; the burst follows in a pass of its own.
        let before = try await waitForFrames(client) { $0.contains { $0.contains(#""a":{"#) } }
        await simulator.setStates(["sensor.a", "sensor.b", "sensor.c"].map { ($0, "2", [:]) })
        let all = try await waitForFrames(client) { $0.joined().components(separatedBy: #""s":"2""#).count == 4 }
        return Array(all.dropFirst(before.count))
    }

    func waitForFrames(_ client: RawClient, until done: ([String]) -> Bool) async throws -> [String] {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while ContinuousClock.now < deadline {
            let frames = client.frames.withLock { $0 }
            if done(frames) { return frames }
            try await Task.sleep(for: .milliseconds(2))
        }
        Issue.record("frames never came: \(client.frames.withLock { $0 })")
        return client.frames.withLock { $0 }
    }

    @Test func aBurstIsOneArrayFrameForAClientThatAskedForCoalescing() async throws {
        let frames = try await framesOfABurst(coalesce: true)
        #expect(frames.count == 1)
        let messages = try JSONText(frames[0]).value().arrayValue ?? []
        #expect(messages.map { $0["type"] } == ["event", "event", "event"])
        #expect(messages.map { $0["event"]?["c"]?.objectValue?.keys.first } == ["sensor.a", "sensor.b", "sensor.c"])
    }

    @Test func aBurstIsAFramePerMessageForAClientThatDidNot() async throws {
        let frames = try await framesOfABurst(coalesce: false)
        #expect(frames.count == 3)
        #expect(try frames.map { try JSONText($0).value()["event"]?["c"]?.objectValue?.keys.first } == ["sensor.a", "sensor.b", "sensor.c"])
    }
}
