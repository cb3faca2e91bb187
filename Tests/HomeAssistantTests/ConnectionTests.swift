import Foundation
import HomeAssistant
import ConnectionTestSupport
import HomeAssistantSimulator
import Testing
import WebSocketTransport
import JSON

/// The connection against the simulator over a real WebSocket on 127.0.0.1.
@Suite(.timeLimit(.minutes(1)))
struct ConnectionTests {
    @Test func deliversEachWatchedEntitysStateThenItsChanges() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.washer_progress", "10", attributes: ["unit_of_measurement": "%"])
        await simulator.setState("sensor.other", "x")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.washer_progress", "timer.laundry"])

        let first = await collect(from: connection.changes) { $0["sensor.washer_progress"] != nil }
        #expect(first?.state("sensor.washer_progress") == "10")
        #expect(first?["sensor.other"] == nil)

        await simulator.setState("sensor.washer_progress", "55", attributes: ["unit_of_measurement": "%"])
        await simulator.setState("timer.laundry", "active", attributes: ["finishes_at": "2026-11-22T13:00:00+00:00"])
        let next = await collect(from: connection.changes) { $0["timer.laundry"] != nil && $0.state("sensor.washer_progress") == "55" }
        guard case .updated(let timer)? = next?["timer.laundry"] else { Issue.record("no timer state"); return }
        #expect(timer.attributes["finishes_at"] == "2026-11-22T13:00:00+00:00")
        await connectionRun.stop()
    }

    @Test func subscribesWithTheEntityFilterAndAsksForCoalescedMessages() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["b.two", "a.one"])
        #expect(await log.wait { $0.contains { $0.isReady } })
        let record = simulator.record
        #expect(record.commands(ofType: "supported_features").first?.message["features"] == ["coalesce_messages": 1])
        #expect(record.commands(ofType: "subscribe_entities").first?.message["entity_ids"] == ["a.one", "b.two"])
        await connectionRun.stop()
    }

    @Test func aDomainSelectionSubscribesToEveryEntityAndKeepsTheDomain() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("light.kitchen", "on")
        await simulator.setState("sensor.other", "1")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(selection: EntitySelection(entityIDs: ["sensor.washer"], domains: ["light"]))
        let first = await collect(from: connection.changes) { $0["light.kitchen"] != nil }
        #expect(first?["sensor.other"] == nil)
        #expect(simulator.record.commands(ofType: "subscribe_entities").first?.message["entity_ids"] == nil)
        // A light that appears later is a member of the domain too.
        await simulator.setState("sensor.other", "2")
        await simulator.setState("light.porch", "on")
        let next = await collect(from: connection.changes) { $0["light.porch"] != nil }
        #expect(next?.state("light.porch") == "on")
        #expect(next?["sensor.other"] == nil)
        await connectionRun.stop()
    }

    @Test func renderTemplateGivesHomeAssistantsResultsAndFollowsThemAcrossAReconnect() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let template = "{{ area_name('kitchen') }}"
        await simulator.setRendering(template, "Kitchen")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        var renderings = connection.renderings(of: template).makeAsyncIterator()
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await renderings.next() == .result("Kitchen"))
        #expect(simulator.record.commands(ofType: "render_template").first?.message["report_errors"] == true)
        await simulator.setRendering(template, "Küche")
        #expect(await renderings.next() == .result("Küche"))
        // After a reconnect the subscription is made again and its first result comes again.
        await simulator.restart(coreState: "RUNNING")
        #expect(await renderings.next() == .result("Küche"))
        #expect(simulator.record.commands(ofType: "render_template").count == 2)
        await connectionRun.stop()
    }

    /// A template asked for again (blueprint test renders the same text twice): Home Assistant sends a template that
    /// reads nothing once per subscription, so a reader joining a live subscription gets its latest answer at once,
    /// and once the last reader has gone the subscription ends and the next reader subscribes afresh.
    @Test func aTemplateReadAgainAfterItsLastReaderWentIsAnsweredAgain() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let template = "{% set title = 'Washing' %}{{ title }}"
        await simulator.setRendering(template, "Washing")
        let connection = try makeConnection(to: simulator, log: EventLog())
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await connection.renderings(of: template).first { _ in true } == .result("Washing"))
        #expect(await connection.renderings(of: template).first { _ in true } == .result("Washing"))
        var held = connection.renderings(of: template).makeAsyncIterator()
        #expect(await held.next() == .result("Washing"))
        #expect(await connection.renderings(of: template).first { _ in true } == .result("Washing"), "joined a live subscription")
        await connectionRun.stop()
    }

    @Test func aTemplateHomeAssistantCannotRenderOrMayNotRenderSaysWhy() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: nil)
        var unknown = connection.renderings(of: "{{ area_name('nowhere') | bad }}").makeAsyncIterator()
        #expect(await unknown.next() == .failure("UndefinedError: no rendering set for {{ area_name('nowhere') | bad }}"))
        await simulator.refuseRenderTemplate(HomeAssistantError(code: "unauthorized", message: "Unauthorized"))
        var refused = connection.renderings(of: "{{ area_name('kitchen') }}").makeAsyncIterator()
        #expect(await refused.next() == .failure("render_template needs an administrator's token, and the token LiveBridge uses is not one: create one as an administrator"))
        await connectionRun.stop()
    }

    @Test func authInvalidIsFinalAndNeverRetried() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, token: "wrong-token-5b1d", log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.x"])
        #expect(await log.wait { $0.contains { $0.isRejected } })
        #expect(await connection.changes.next() == nil)
        #expect(connection.currentPhase == .rejected)
        // Ten reconnect periods (initial 20 ms) pass: a retry would have shown by now.
        try await Task.sleep(for: .milliseconds(300))
        #expect(simulator.record.authAttempts == 1)
        #expect(log.count { $0.isConnecting } == 1)
        #expect(log.lines.contains { $0.contains("rejected the access token") })
        do {
            _ = try await connection.getConfig()
            Issue.record("a request after rejection must fail")
        } catch let error as HomeAssistantError {
            #expect(error.code == "rejected")
        }
        await connectionRun.stop()
    }

    @Test func theTokenNeverAppearsInEventsOrErrors() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.x"])
        #expect(await log.wait { $0.contains { $0.isReady } })
        await simulator.dropConnections()
        #expect(await log.wait { $0.filter { $0.isReady }.count == 2 })
        // A server that quotes the presented token back: it is masked before anything reports it.
        await simulator.setEchoesTokens(true)
        let rejectedLog = EventLog()
        let rejected = try makeConnection(to: simulator, token: "bad-secret-token-77", log: rejectedLog)
        let rejectedRun = await rejected.started(entityIDs: nil)
        #expect(await rejectedLog.wait { $0.contains { $0.isRejected } })
        let everything = (log.lines + rejectedLog.lines).joined(separator: "\n")
            + "\(connection.configuration)" + "\(rejected.configuration.token)"
        #expect(!everything.contains(simulatorToken))
        #expect(!everything.contains("bad-secret-token-77"))
        #expect(rejectedLog.lines.contains { $0.contains("Invalid access token or password: <token redacted>") }, "\(rejectedLog.lines)")
        // A command's error and a template's refusal quoting it (the token's start, as a quote cut short leaves it):
        // callers print both, so they come masked.
        let start = String(simulatorToken.prefix(12))
        await simulator.failService("notify.phone", with: HomeAssistantError(code: "home_assistant_error", message: "no \(simulatorToken)"))
        await #expect(throws: HomeAssistantError(code: "home_assistant_error", message: "no <token redacted>")) {
            try await connection.callService(domain: "notify", service: "phone")
        }
        await simulator.refuseRenderTemplate(HomeAssistantError(code: "unauthorized", message: "for \(start)…"))
        await simulator.refuseRenderTemplate(HomeAssistantError(code: "template_error", message: "for \(start)…"))
        #expect(await connection.renderings(of: "{{ 1 }}").first { _ in true }
                == .failure("Home Assistant refused to render it: template_error: for <token redacted>…"))
        await connectionRun.stop()
        await rejectedRun.stop()
    }

    @Test func callServiceReturnsTheResultOrTheErrorCodeAndMessage() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: nil)
        let result = try await connection.callService(domain: "light", service: "turn_on", data: ["brightness": 200],
                                                      target: ["entity_id": "light.kitchen"])
        #expect(result["context"]?["id"]?.stringValue?.hasPrefix("01SIM") == true)
        let call = simulator.record.serviceCalls.first
        #expect(call?["service_data"] == ["brightness": 200])
        #expect(call?["target"] == ["entity_id": "light.kitchen"])

        await simulator.failService("notify.mobile_app_phone", with: HomeAssistantError(code: "service_validation_error", message: "bad data"))
        await #expect(throws: HomeAssistantError(code: "service_validation_error", message: "bad data")) {
            try await connection.callService(domain: "notify", service: "mobile_app_phone")
        }
        await #expect(throws: HomeAssistantError(code: "unknown_command", message: "Unknown command.")) {
            try await connection.send(["type": "no_such_command"])
        }
        await connectionRun.stop()
    }

    @Test func getConfigReportsTheCoreState() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let connection = try makeConnection(to: simulator, log: EventLog())
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(try await connection.getConfig()["state"] == "RUNNING")
        await connectionRun.stop()
    }

    @Test func subscribedEventsArriveAndAreResubscribedAfterAReconnect() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let events = connection.events(ofType: "livebridge_activity")
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_events").count == 1 })
        await simulator.fireEvent("livebridge_activity", data: ["activity": "washer"])
        await simulator.fireEvent("other_event", data: ["ignored": true])
        await simulator.dropConnections()
        #expect(await simulator.wait { $0.commands(ofType: "subscribe_events").count == 2 })
        await simulator.fireEvent("livebridge_activity", data: ["activity": "dryer"])
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next()?["data"] == ["activity": "washer"])
        #expect(await iterator.next()?["data"] == ["activity": "dryer"])
        let subscriptions = simulator.record.commands(ofType: "subscribe_events")
        #expect(subscriptions.map(\.connection) == [1, 2])
        #expect(subscriptions.allSatisfy { $0.message["event_type"] == "livebridge_activity" })
        await connectionRun.stop()
    }

    @Test func anEntityRemovedWhileDisconnectedDisappears() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        await simulator.setState("sensor.b", "2")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log) { $0.reconnect = ReconnectPolicy(initial: .milliseconds(300), maximum: .milliseconds(300)) }
        let connectionRun = await connection.started(entityIDs: ["sensor.a", "sensor.b"])
        _ = await collect(from: connection.changes) { $0.count == 2 }
        await simulator.dropConnections()
        #expect(await log.wait { $0.contains { $0.isDisconnected } })
        await simulator.remove("sensor.b")
        await simulator.setState("sensor.a", "changed offline")
        let after = await collect(from: connection.changes) { $0["sensor.b"] != nil && $0["sensor.a"] != nil }
        #expect(after?["sensor.b"] == .removed(entityID: "sensor.b"))
        #expect(after?.state("sensor.a") == "changed offline")
        #expect(await connection.currentStates().map(\.entityID) == ["sensor.a"])
        await connectionRun.stop()
    }

    @Test func afterARestartTheSnapshotIsTrustedOnlyOnceRunning() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        await simulator.setState("sensor.late", "loaded")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.a", "sensor.late"])
        _ = await collect(from: connection.changes) { $0.count == 2 }

        // Restarting: only sensor.a is known until RUNNING; the client must not drop sensor.late.
        await simulator.restart(coreState: "STARTING", entitiesWhileStarting: ["sensor.a"])
        #expect(await log.wait { $0.contains { $0 == .waitingForStartup(coreState: "STARTING") } })
        #expect(await simulator.wait { $0.commands(ofType: "get_config").filter { $0.connection == 2 }.count >= 3 })
        #expect(simulator.record.commands(ofType: "subscribe_entities").filter { $0.connection == 2 }.isEmpty)
        #expect(await connection.currentStates().map(\.entityID) == ["sensor.a", "sensor.late"])

        await simulator.setCoreState("RUNNING")
        #expect(await log.wait { $0.filter { $0.isReady }.count == 2 })
        #expect(await connection.currentStates().map(\.entityID) == ["sensor.a", "sensor.late"])
        await connectionRun.stop()
    }

    /// A ping every 50 ms with 600 ms for its pong: short enough for a quick test, long enough that a pong is never
    /// late under ThreadSanitizer (make sanitize runs everything several times slower).
    func heartbeatConnection(to simulator: HomeAssistantSimulator, log: EventLog) throws -> HomeAssistantConnection {
        try makeConnection(to: simulator, log: log) {
            $0.pingInterval = .milliseconds(50)
            $0.pongTimeout = .milliseconds(600)
        }
    }

    /// A timer that went off leaves the socket's list: a ping's, one every interval, piled up there for as long as the
    /// socket lived (cancelled one by one only when it closed).
    @Test func pingTimersDoNotPileUpOnALongLivedSocket() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try heartbeatConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await simulator.wait { $0.commands(ofType: "ping").count >= 12 })
        let held = await connection.socketTimerCount()
        #expect(held != nil && held! <= 3, "\(String(describing: held)) timers held after 12 pings")
        #expect(log.count { $0.isDisconnected } == 0)
        await connectionRun.stop()
    }

    @Test func noPongInTimeMeansDeadAndReconnects() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try heartbeatConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await simulator.wait { $0.commands(ofType: "ping").count >= 2 })
        #expect(log.count { $0.isDisconnected } == 0)
        await simulator.setAnswersPings(false)
        #expect(await log.wait { $0.contains { $0 == .disconnected(reason: "no pong within 0.600s") } })
        await simulator.setAnswersPings(true)
        #expect(await log.wait { $0.filter { $0.isReady }.count >= 2 && $0.last?.isReady == true }, "\(log.lines)")
        await connectionRun.stop()
    }

    /// The daemon's own work runs on the connection's thread (`executor`): a job that holds it past the pong timeout
    /// (a slow template) leaves the pong unread, and libwebsockets runs the due timer before it reads. That timer looks
    /// again once the socket has been read instead of dropping a healthy link.
    @Test func aPongLeftUnreadWhileTheLoopWasBusyIsNotAMissingPong() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try heartbeatConnection(to: simulator, log: log)
        await simulator.setPongDelay(.milliseconds(300))
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await simulator.wait { $0.commands(ofType: "ping").count >= 2 })
        for _ in 0..<3 {
            // Held for 1.5 s right after a ping: its pong comes 0.3 s after it and waits in the socket.
            let pings = simulator.record.commands(ofType: "ping").count
            #expect(await simulator.wait { $0.commands(ofType: "ping").count > pings })
            _ = await Task(executorPreference: connection.executor) { usleep(1_500_000) }.value
            #expect(await simulator.wait { $0.commands(ofType: "ping").count >= pings + 3 })
        }
        #expect(log.count { $0.isDisconnected } == 0, "\(log.lines)")
        await connectionRun.stop()
    }

    @Test func idsStrictlyIncreaseWithinAndAcrossReconnects() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.a"])
        #expect(await log.wait { $0.contains { $0.isReady } })
        _ = try await connection.getConfig()
        await simulator.dropConnections()
        #expect(await log.wait { $0.filter { $0.isReady }.count == 2 })
        _ = try await connection.getConfig()
        let ids = simulator.record.commands.map(\.id)
        #expect(ids.count >= 8)
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        #expect(Set(simulator.record.commands.map(\.connection)) == [1, 2])
        await connectionRun.stop()
    }

    @Test func aTwentyMebibyteSnapshotArrivesWhole() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.addPadding(totalBytes: 20 << 20, count: 20)
        let ids = (0..<20).map { "sensor.padding_\($0)" }
        let connection = try makeConnection(to: simulator, log: EventLog())
        let connectionRun = await connection.started(entityIDs: ids)
        let states = await collect(from: connection.changes, timeout: .seconds(30)) { $0.count == 20 }
        guard case .updated(let padding)? = states?["sensor.padding_7"] else { Issue.record("padding missing"); return }
        #expect(padding.attributes["blob"]?.stringValue?.count == (20 << 20) / 20)
        await connectionRun.stop()
    }

    @Test func aMessageOverTheCapIsDroppedWithAClearErrorAndTheConnectionRecovers() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.small", "1")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log) { $0.maximumMessageSize = 1 << 20 }
        let connectionRun = await connection.started(entityIDs: ["sensor.small", "sensor.huge"])
        #expect(await log.wait { $0.contains { $0.isReady } })
        await simulator.setState("sensor.huge", "on", attributes: ["blob": .string(String(repeating: "y", count: 2 << 20))])
        #expect(await log.wait { events in
            events.contains { $0.description.contains("over the 1048576-byte limit") && $0.isError }
        })
        #expect(await log.wait { $0.contains { $0.isDisconnected } })
        await simulator.remove("sensor.huge")
        await simulator.setState("sensor.small", "2")
        let recovered = await collect(from: connection.changes) { $0.state("sensor.small") == "2" }
        #expect(recovered != nil)
        await connectionRun.stop()
    }

    /// The messages of one read are applied together: a coalesced frame of three events reaches a waiting consumer as
    /// one batch, not as one wake-up per message.
    @Test func theMessagesOfOneReadReachAWaitingConsumerAsOneBatch() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setStates(["sensor.a", "sensor.b", "sensor.c"].map { ($0, "1", [:]) })
        let connection = try makeConnection(to: simulator, log: EventLog())
        let connectionRun = await connection.started(entityIDs: ["sensor.a", "sensor.b", "sensor.c"])
        _ = await collect(from: connection.changes) { $0["sensor.c"] != nil }
        let next = Task { await connection.changes.next() }
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !connection.changes.isAwaited, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(connection.changes.isAwaited)
        let events = ["sensor.a", "sensor.b", "sensor.c"].map { #"{"id":3,"type":"event","event":{"c":{""# + $0 + #"":{"+":{"s":"2"}}}}}"# }
        await simulator.sendRaw("[" + events.joined(separator: ",") + "]")
        let batch = await next.value
        #expect(batch?.map(\.entityID) == ["sensor.a", "sensor.b", "sensor.c"])
        #expect(batch?.map { change -> String? in if case .updated(let state) = change { state.state } else { nil } } == ["2", "2", "2"])
        await connectionRun.stop()
    }

    /// A coalesced frame mixing the subscription's diffs with other messages (a field Home Assistant renders brings
    /// its `render_template` event in the same tick): the diffs are applied where they arrived, the others decoded
    /// alone, all in the frame's order; after a message that changes the entities themselves (a removal), the diffs
    /// that follow are handled the general way, against the store as it then is.
    @Test func aMixedCoalescedFrameIsTakenInPlaceInItsOrder() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setStates(["sensor.a", "sensor.b", "sensor.c"].map { ($0, "1", [:]) })
        let template = "{{ area_name('laundry') }}"
        await simulator.setRendering(template, "Laundry")
        let connection = try makeConnection(to: simulator, log: EventLog())
        var renderings = connection.renderings(of: template).makeAsyncIterator()
        let connectionRun = await connection.started(entityIDs: ["sensor.a", "sensor.b", "sensor.c"])
        #expect(await renderings.next() == .result("Laundry"))
        _ = await collect(from: connection.changes) { $0["sensor.c"] != nil }
        let subscription = try #require(simulator.record.commands(ofType: "subscribe_entities").last?.message["id"]?.intValue)
        let rendering = try #require(simulator.record.commands(ofType: "render_template").last?.message["id"]?.intValue)
        let before = connection.framesReadInPlaceCount
        func diff(_ id: String, _ state: String) -> String {
            #"{"type":"event","event":{"c":{""# + id + #"":{"+":{"s":""# + state + #""}}}},"id":\#(subscription)}"#
        }
        let frame = "[" + [
            diff("sensor.a", "2"),
            #"{"id":\#(rendering),"type":"event","event":{"result":"Dryer","listeners":{"all":false,"entities":[],"domains":[],"time":false}}}"#,
            diff("sensor.b", "2"),
            #"{"id":\#(subscription),"type":"event","event":{"r":["sensor.b"]}}"#,
            diff("sensor.b", "3"),
            diff("sensor.c", "2"),
        ].joined(separator: ",") + "]"
        await simulator.sendRaw(frame)
        let after = await collect(from: connection.changes) { $0.state("sensor.c") == "2" }
        #expect(after?.state("sensor.a") == "2")
        #expect(after?["sensor.b"] == .removed(entityID: "sensor.b"), "removed, and its later diff not applied to a missing entity")
        #expect(await renderings.next() == .result("Dryer"))
        #expect(connection.framesReadInPlaceCount == before + 1)
        // A message this client does not act on is passed over in its place; the diffs around it are applied.
        await simulator.sendRaw("[" + [diff("sensor.a", "5"), #"{"id":"x","type":"event","event":{}}"#, "[1]", diff("sensor.c", "5")]
            .joined(separator: ",") + "]")
        let later = await collect(from: connection.changes) { $0.state("sensor.c") == "5" }
        #expect(later?.state("sensor.a") == "5")
        #expect(connection.framesReadInPlaceCount == before + 2)
        // The frame's order, exactly as a waiting consumer gets it: a diff, the subscription's own `a` for the same
        // entity, then diffs after it (handled the general way), each where it stood.
        let next = Task { await connection.changes.next() }
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !connection.changes.isAwaited, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        await simulator.sendRaw("[" + [diff("sensor.a", "7"), #"{"id":\#(subscription),"type":"event","event":{"a":{"sensor.a":{"s":"8"}}}}"#,
                                      diff("sensor.a", "9"), diff("sensor.c", "9")].joined(separator: ",") + "]")
        let batch = await next.value
        #expect(batch?.map { change -> String in
            if case .updated(let state) = change { "\(state.entityID)=\(state.state)" } else { "\(change.entityID) removed" }
        } == ["sensor.a=7", "sensor.a=8", "sensor.a=9", "sensor.c=9"])
        #expect(connection.framesReadInPlaceCount == before + 3)
        await connectionRun.stop()
    }

    @Test func aMalformedFrameIsIgnoredAndTheStreamGoesOn() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.a"])
        _ = await collect(from: connection.changes) { $0["sensor.a"] != nil }
        await simulator.sendRaw("{\"id\": 3, \"type\": \"event\", \"event\": {\"c\": ")
        await simulator.sendRaw("[1, 2")
        await simulator.setState("sensor.a", "2")
        let next = await collect(from: connection.changes) { $0.state("sensor.a") == "2" }
        #expect(next != nil)
        #expect(log.count { $0.description.hasPrefix("ignored a malformed message") } == 2)
        #expect(log.count { $0.isDisconnected } == 0)
        await connectionRun.stop()
    }

    /// Invalid UTF-8 fails the connection (RFC 6455) and says so; a server that does it after every snapshot is
    /// retried ever more slowly, not every 20 ms for ever.
    @Test func invalidUTF8IsNamedAndTheBackOffGrowsWhenItRepeats() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.a", "1")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: ["sensor.a"])
        for round in 1...4 {
            #expect(await log.wait { events in events.filter(\.isReady).count == round })
            await simulator.sendRawBytes(Array(#"{"id":1,"type":"event","event":""#.utf8) + [0xFF] + Array(#""}"#.utf8))
            #expect(await log.wait { events in events.filter(\.isDisconnected).count == round })
        }
        // The reconnect is announced just after the disconnect: wait for the fourth.
        @Sendable func reconnects(_ events: [ConnectionEvent]) -> [Duration] {
            events.compactMap { event -> Duration? in if case .reconnecting(let after) = event { after } else { nil } }
        }
        #expect(await log.wait { reconnects($0).count >= 4 })
        let delays = reconnects(log.events)
        try #require(delays.count >= 4)
        // Ceilings 20, 40, 80, 160 ms with the delay in the upper half of each: without the growth, all would be ≤ 20 ms.
        #expect(delays[3] >= .milliseconds(80), "\(delays)")
        #expect(log.events.contains { $0.description == "Home Assistant sent a 35-byte text message that is not valid UTF-8; reconnecting" },
                "\(log.events.map(\.description))")
        await connectionRun.stop()
    }

    @Test(arguments: [ConnectionConfiguration.EntitySource.subscribeEntities, .stateChanged])
    func entitiesHomeAssistantLacksAreNamedWithTheClosestIdAndClearedWhenTheyAppear(source: ConnectionConfiguration.EntitySource) async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.washer_status", "idle")
        await simulator.setState("sensor.dryer_status", "idle")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log) { $0.entitySource = source }
        let connectionRun = await connection.started(entityIDs: ["sensor.washer_staus", "sensor.dryer_status", "light.nothing_like_it"])
        #expect(await log.wait { events in events.filter { if case .missingEntity = $0 { true } else { false } }.count == 2 })
        #expect(connection.missingEntities == [MissingEntity(entityID: "light.nothing_like_it", suggestion: nil),
                                               MissingEntity(entityID: "sensor.washer_staus", suggestion: "sensor.washer_status")])
        #expect(log.events.contains { $0.description == "sensor.washer_staus is not an entity in Home Assistant (did you mean sensor.washer_status?)" })
        await simulator.setState("sensor.washer_staus", "on")
        _ = await collect(from: connection.changes) { $0["sensor.washer_staus"] != nil }
        #expect(connection.missingEntities == [MissingEntity(entityID: "light.nothing_like_it", suggestion: nil)])
        await connectionRun.stop()
    }

    /// Work handed to a stopped connection fails at once: it used to be queued to a loop that was gone, and wait forever.
    @Test func aCommandOrAStopAfterStopReturnsAtOnce() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log)
        let connectionRun = await connection.started(entityIDs: [])
        #expect(await log.wait { $0.contains { $0.isReady } })
        await connectionRun.stop()
        await #expect(throws: HomeAssistantError(code: "stopped", message: "the connection was stopped")) {
            try await connection.getConfig()
        }
        await connectionRun.stop()
        #expect(await connection.currentStates().isEmpty)
        let events = connection.events(ofType: "anything")
        for await _ in events { Issue.record("a stopped connection gave an event") }
    }

    @Test func utf8ValidationAgreesWithTheStandardLibrary() {
        var random = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [[0x41], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80],
                                 [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82], [0xFF], Array("0123456789abcdef".utf8),
                                 Array(String(repeating: "x", count: 37).utf8)]
        // Whole blocks of ASCII to the very end, and one bad byte just past them.
        for length in [8, 16, 31, 32, 33, 40, 64, 96] {
            let ascii = Array(repeating: UInt8(ascii: "a"), count: length)
            #expect(UTF8Validation.isValid(ascii))
            #expect(!UTF8Validation.isValid(ascii + [0xFF]))
            #expect(!UTF8Validation.isValid([0xFF] + ascii))
        }
        // Long ASCII runs with the rest at every offset: the 32- and 8-byte steps and the bytes after them.
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &random)).flatMap { _ in pieces.randomElement(using: &random)! }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            #expect(UTF8Validation.isValid(bytes) == expected, "\(bytes)")
        }
    }

    @Test func aSlowConsumerGetsTheLatestStatePerEntity() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.counter", "0")
        let connection = try makeConnection(to: simulator, log: EventLog())
        let connectionRun = await connection.started(entityIDs: ["sensor.counter", "sensor.last"])
        _ = await collect(from: connection.changes) { $0["sensor.counter"] != nil }
        for n in 1...500 { await simulator.setState("sensor.counter", String(n)) }
        await simulator.setState("sensor.last", "done")
        // Nothing was read meanwhile: the feed holds one change per entity, the newest.
        let batch = await collect(from: connection.changes) { $0["sensor.last"] != nil }
        #expect(batch?.state("sensor.counter") == "500")
        #expect(connection.changes.coalescedCount >= 400)
        await connectionRun.stop()
    }

    @Test func aHalfOpenSocketTimesOutTheHandshakeAndIsRetried() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let log = EventLog()
        var configuration = try ConnectionConfiguration(url: "ws://127.0.0.1:\(listener.port)", token: AccessToken(simulatorToken))
        configuration.handshakeTimeout = .milliseconds(200)
        configuration.reconnect = ReconnectPolicy(initial: .milliseconds(20), maximum: .milliseconds(40))
        let connection = try HomeAssistantConnection(configuration: configuration) { log.record($0) }
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await log.wait { $0.filter { $0 == .disconnected(reason: "no WebSocket handshake within 0.200s") }.count >= 2 })
        await connectionRun.stop()
    }

    @Test func aServerThatNeverAuthenticatesTimesOutAndIsRetried() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setUnresponsive(true)
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log) { $0.authTimeout = .milliseconds(150) }
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(await log.wait { $0.filter { $0 == .disconnected(reason: "no auth_ok within 0.150s") }.count >= 2 })
        await simulator.setUnresponsive(false)
        #expect(await log.wait { $0.contains { $0.isReady } })
        await connectionRun.stop()
    }

    @Test func theStateChangedFallbackFollowsOnlyTheWatchedEntities() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        await simulator.setState("sensor.watched", "1", attributes: ["unit_of_measurement": "%"])
        await simulator.setState("sensor.other", "x")
        let log = EventLog()
        let connection = try makeConnection(to: simulator, log: log) { $0.entitySource = .stateChanged }
        let connectionRun = await connection.started(entityIDs: ["sensor.watched", "sensor.later"])
        let first = await collect(from: connection.changes) { $0["sensor.watched"] != nil }
        #expect(first?.state("sensor.watched") == "1")
        #expect(simulator.record.commands(ofType: "subscribe_entities").isEmpty)
        #expect(simulator.record.commands(ofType: "subscribe_events").first?.message["event_type"] == "state_changed")
        await simulator.setState("sensor.other", "y")
        await simulator.setState("sensor.watched", "2", attributes: ["unit_of_measurement": "%"])
        await simulator.setState("sensor.later", "new")
        await simulator.remove("sensor.watched")
        let next = await collect(from: connection.changes) { $0["sensor.later"] != nil && $0["sensor.watched"] == .removed(entityID: "sensor.watched") }
        #expect(next?["sensor.other"] == nil)
        #expect(next?.state("sensor.later") == "new")
        #expect(await connection.currentStates().map(\.entityID) == ["sensor.later"])
        await connectionRun.stop()
    }

    @Test func requestsMadeWhileDisconnectedWaitForTheConnection() async throws {
        let simulator = try HomeAssistantSimulator(token: simulatorToken)
        defer { simulator.stop() }
        let connection = try makeConnection(to: simulator, log: EventLog())
        async let config = connection.getConfig()
        let connectionRun = await connection.started(entityIDs: nil)
        #expect(try await config["state"] == "RUNNING")
        await connectionRun.stop()
    }
}

/// A TCP listener that never speaks: the socket connects, the WebSocket handshake never completes.
final class SilentListener: @unchecked Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(fd) }
}
