@testable import HomeAssistant
import JSON
import Platform
import Testing
@testable import WebSocketTransport

/// The parts `HomeAssistantConnection` is made of, each on its own: the request table, the heartbeat, the
/// back-off between sockets, and the two ways of following entities.
struct ConnectionPartsTests {
    private func request(_ type: String, _ results: Box) -> RequestTable.Request {
        RequestTable.Request(command: ["type": .string(type)]) { results.values.append($0) }
    }

    private final class Box { var values: [Result<JSONValue, HomeAssistantError>] = [] }

    @Test func requestIDsGoOnFromThePreviousSocketAndAResultReachesItsRequestOnce() throws {
        let results = Box()
        var first = RequestTable()
        let (one, frame) = first.add(request("get_config", results))
        #expect(one == 1)
        #expect(try JSONParser.parse(frame) == ["type": "get_config", "id": 1])
        let (two, _) = first.add(request("ping", results))
        #expect(two == 2 && first.isWaiting(id: 2))
        var next = RequestTable(firstID: first.nextID)
        #expect(next.add(request("get_states", results)).id == 3)
        #expect(next.take(id: 1) == nil, "a result on another socket reaches nothing")
        let found = first.take(id: 1)
        let taken = try #require(found)
        taken.finish(.success(["state": "RUNNING"]))
        taken.finish(.failure(.disconnected))
        #expect(results.values.count == 1, "a request finishes once")
        #expect(first.take(id: 1) == nil)
        #expect(first.takeAll().map(\.type) == ["ping"])
        #expect(!first.isWaiting(id: 2))
    }

    @Test func thePongOfTheAwaitedPingAloneCancelsItsTimer() {
        var heartbeat = Heartbeat(interval: .seconds(30), timeout: .seconds(10))
        #expect(heartbeat.pong(id: 5) == nil)
        heartbeat.sent(ping: 5, timer: .init(id: 42))
        #expect(heartbeat.isAwaiting(5) && !heartbeat.isAwaiting(4))
        #expect(heartbeat.pong(id: 4) == nil)
        #expect(heartbeat.pong(id: 5) == .init(id: 42))
        #expect(!heartbeat.isAwaiting(5))
        heartbeat.sent(ping: 6, timer: .init(id: 43))
        #expect(heartbeat.stop() == .init(id: 43))
        #expect(heartbeat.stop() == nil)
    }

    @Test func eachAttemptWaitsLongerUntilTheBackOffStartsOver() {
        let policy = ReconnectPolicy(initial: .seconds(1), maximum: .seconds(8))
        var reconnection = Reconnection()
        // random 0.999…: the top of each ceiling, 1 s, 2 s, 4 s, 8 s, 8 s.
        let delays = (0..<5).map { _ in reconnection.nextDelay(policy, random: 0.999_999) }
        #expect(delays.map { ($0 / .milliseconds(1)).rounded() } == [1000, 2000, 4000, 8000, 8000])
        #expect(reconnection.attempt == 5)
        reconnection.startOver()
        #expect(reconnection.attempt == 0)
        #expect((reconnection.nextDelay(policy, random: 0.999_999) / .milliseconds(1)).rounded() == 1000)
    }

    @Test func whatHomeAssistantSentKeepsTheBackOffCountingAndAnOrdinaryEndOfAReadyLinkStartsItOver() {
        let sentByTheServer: [CloseReason] = [.messageTooLarge(size: 2, limit: 1), .invalidUTF8(size: 3),
                                              .protocolViolation("WebSocket protocol error: a masked frame from the server")]
        for reason in sentByTheServer {
            #expect(!Reconnection.startsOver(after: reason, reachedReady: true), "\(reason)")
        }
        let ordinary: [CloseReason] = [.closed, .closedByPeer(code: 1001, reason: ""), .closedLocally("no pong"), .connectFailed("refused")]
        for reason in ordinary {
            #expect(Reconnection.startsOver(after: reason, reachedReady: true), "\(reason)")
            #expect(!Reconnection.startsOver(after: reason, reachedReady: false), "\(reason)")
        }
    }

    @Test func aReportedEventNeverCarriesTheToken() {
        let token = "eyJhbGciOiJIUzI1NiJ9.secret"
        let events: [ConnectionEvent] = [
            .disconnected(reason: "the server answered the WebSocket upgrade with HTTP 500 \(token), not 101"),
            .rejected(message: "bad \(token) and \(token)"), .warning("result: \(token)"),
            .authenticated(haVersion: token), .waitingForStartup(coreState: token),
            .missingEntity(MissingEntity(entityID: "sensor.\(token)", suggestion: token)),
        ]
        for event in events {
            let redacted = event.redacting(token)
            #expect(!redacted.description.contains(token) && redacted.description.contains("<token redacted>"), "\(redacted)")
        }
        #expect(ConnectionEvent.warning("a b c").redacting("b") == .warning("a b c"))
    }

    /// Outside text quoted to a length can hold the token's start only (an upgrade answer is cut at 80 characters):
    /// that start is masked too, while a run shorter than twelve characters, or text unlike the token, is left.
    @Test func aTokenCutShortIsMaskedToo() {
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJhYmMifQ.c2lnbmF0dXJlLXNlY3JldA"
        let cut = String(token.prefix(30))
        let quoted = ConnectionEvent.disconnected(reason: "the server answered \"HTTP/1.1 500 \(cut)…\", not 101").redacting(token)
        #expect(quoted == .disconnected(reason: "the server answered \"HTTP/1.1 500 <token redacted>…\", not 101"))
        // Runs that touch or overlap are one mask; a run of eleven is left.
        let twice = ConnectionEvent.warning("\(token)\(token.prefix(12)) and \(token.prefix(11))").redacting(token)
        #expect(twice == .warning("<token redacted> and \(token.prefix(11))"))
        // A start of the token running into the whole of it hides nothing of it.
        let overlapping = ConnectionEvent.warning("\(token.prefix(21))\(token)!").redacting(token)
        #expect(overlapping == .warning("<token redacted>!"))
        // As OutsideText.quoted escapes it, too.
        let odd = "abc\"def\\ghijklmnop-secret"
        #expect(AccessToken(odd).masking(in: "got \(OutsideText.quoted(odd, limit: 20))") == "got \"<token redacted>…[5 more bytes cut]\"", "\(OutsideText.quoted(odd, limit: 20))")
        #expect(ConnectionEvent.warning("eyJhbGciOiJIUzI1NiJ9 is a JWT header").redacting(token)
                == .warning("<token redacted> is a JWT header"))
        #expect(ConnectionEvent.warning("nothing like it").redacting(token) == .warning("nothing like it"))
    }

    @Test func subscribeEntitiesTakesTheFirstEventAsTheSnapshotAndTheRestAsChanges() throws {
        let following = EntitySubscription(EntitySelection(entityIDs: ["sensor.a", "sensor.b"]))
        #expect(following.subscription == ["type": "subscribe_entities", "entity_ids": ["sensor.a", "sensor.b"]])
        #expect(following.snapshotCommand == nil)
        var store = EntityStore()
        store.share(entityIDs: ["sensor.a", "sensor.b"])
        let snapshot = following.take(JSONText(#"{"a":{"sensor.a":{"s":"1","lc":1.0}}}"#), into: &store)
        guard case .snapshot(let changes, let known, _) = snapshot else { Issue.record("\(snapshot)"); return }
        #expect(changes.map(\.entityID) == ["sensor.a"] && known == nil)
        let change = following.take(JSONText(#"{"c":{"sensor.a":{"+":{"s":"2"}}}}"#), into: &store)
        guard case .changes(let changed) = change else { Issue.record("\(change)"); return }
        #expect(changed.map(\.entityID) == ["sensor.a"] && store["sensor.a"]?.state == "2")
        #expect(following.take(JSONText(#"{"c":"#), into: &store) == .skipped("ignored a malformed entities event: \(errorOf(#"{"c":"#))"))
        #expect(EntitySubscription(EntitySelection(entityIDs: [], domains: ["sensor"])).subscription == ["type": "subscribe_entities"])
    }

    @Test func aMalformedSnapshotGivesTheSocketUp() {
        let following = EntitySubscription(EntitySelection(entityIDs: ["sensor.a"]))
        var store = EntityStore()
        guard case .unusable(let reason, nil) = following.take(JSONText(#"{"a":"#), into: &store) else {
            Issue.record("a malformed snapshot must give the socket up"); return
        }
        #expect(reason.hasPrefix("malformed entities snapshot: "))
    }

    @Test func stateChangedIgnoresEventsBeforeGetStatesThenTakesWatchedEntitiesOnly() throws {
        let following = StateChangedFollowing(EntitySelection(entityIDs: ["sensor.a"]))
        #expect(following.subscription == ["type": "subscribe_events", "event_type": "state_changed"])
        #expect(following.snapshotCommand == ["type": "get_states"])
        var store = EntityStore()
        let event = { (id: String, state: String) in
            JSONText(#"{"event_type":"state_changed","data":{"entity_id":"\#(id)","new_state":{"entity_id":"\#(id)","state":"\#(state)","attributes":{},"last_changed":"2026-11-23T10:00:00+00:00","last_updated":"2026-11-23T10:00:00+00:00","context":{"id":"x"}}}}"#)
        }
        #expect(following.take(event("sensor.a", "early"), into: &store) == .nothing)
        let noSnapshot = EntityFollowingOutcome.unusable("could not read the states", warning: "get_states failed")
        #expect(following.takeSnapshot(.success("not a list"), into: &store) == noSnapshot)
        #expect(following.takeSnapshot(.failure(.timeout("get_states")), into: &store) == noSnapshot)
        let states: JSONValue = [["entity_id": "sensor.a", "state": "1", "attributes": [:]], ["entity_id": "sensor.z", "state": "9", "attributes": [:]]]
        guard case .snapshot(let changes, let known, let warnings) = following.takeSnapshot(.success(states), into: &store) else { Issue.record("no snapshot"); return }
        #expect(changes.map(\.entityID) == ["sensor.a"] && known == ["sensor.a", "sensor.z"] && warnings.isEmpty)
        #expect(following.take(event("sensor.z", "10"), into: &store) == .nothing)
        guard case .changes(let changed) = following.take(event("sensor.a", "2"), into: &store) else { Issue.record("no change"); return }
        #expect(changed.map(\.entityID) == ["sensor.a"] && store["sensor.a"]?.state == "2")
    }

    private func errorOf(_ text: String) -> String {
        var store = EntityStore()
        do { _ = try store.apply(JSONText(text)); return "" } catch { return "\(error)" }
    }
}
