import Platform
import FoundationEssentials
public import HomeAssistant
public import JSON
import Synchronization
public import WebSocketTransport

/// A fake Home Assistant on 127.0.0.1, speaking the WebSocket API over a real libwebsockets server.
///
/// It authenticates a token, answers `supported_features` (coalescing the subscribe result with its snapshot,
/// as the real server does), `subscribe_entities` with snapshot and compressed diffs, `subscribe_events`,
/// `call_service`, `get_config` (STARTING/RUNNING), `get_states` and `ping`. A script drives it: set and remove
/// entities, fire events, restart, stop answering pings, drop sockets, send malformed frames.
/// Used by the tests, the demo and the benchmark.
public final class HomeAssistantSimulator: @unchecked Sendable {
    public struct Options: Sendable {
        public var token: String
        public var haVersion = "2026.11.0"
        public var fragmentSize = 256 << 10
        public var maximumMessageSize = 64 << 20
        public var port = 0
        /// PEM certificate and key: serve wss:// instead of ws://.
        public var tlsCertificate: (certificate: String, key: String)?
        /// Whether it honours `coalesce_messages` as Home Assistant does; off, every message is a frame of its own
        /// whatever the client asked (a server without the feature).
        public var coalesces = true
        public init(token: String) { self.token = token }
    }

    public let options: Options
    public let port: Int
    public var url: String { "\(options.tlsCertificate == nil ? "ws" : "wss")://127.0.0.1:\(port)/api/websocket" }

    private let loop: WebSocketEventLoop
    private let recorded = Locked(SimulatorRecord())
    private let waiters = Locked<[UUID: (predicate: @Sendable (SimulatorRecord) -> Bool, continuation: CheckedContinuation<Bool, Never>)]>([:])

    // Confined to the loop thread.
    private var entities: [String: SimulatedEntity] = [:]
    private var coreState = "RUNNING"
    private var listedServices: [String: [String]]?
    private var answersPings = true
    /// How long a `pong` takes (zero: at once).
    private var pongDelay: Duration = .zero
    private var unresponsive = false
    /// A hostile server: the token a client presented is quoted back in auth_invalid's message.
    private var echoesTokens = false
    private var clients: [ObjectIdentifier: Client] = [:]
    private var contextCounter = 0
    private var serviceErrors: [String: HomeAssistantError] = [:]
    /// What render_template gives for each template (the simulator renders nothing itself): set by the script.
    private var renderings: [String: JSONValue] = [:]
    /// When set, render_template is refused with this error, as for a token that may not use it.
    private var renderTemplateError: HomeAssistantError?
    /// What `config/{entity,device,area}_registry/list` answer: lists of entries as Home Assistant gives them.
    private var registries: [String: JSONValue] = [:]
    /// The registries refused, as Home Assistant refuses them to a user who is not an administrator.
    private var registriesRefused = false

    private final class Client {
        let connection: WebSocketConnection
        let number: Int
        var authenticated = false
        var coalesce = false
        var lastID = 0
        var entitySubscriptions: [Int: Set<String>?] = [:]
        var eventSubscriptions: [Int: String] = [:]
        /// render_template subscriptions: the template by subscription id.
        var templateSubscriptions: [Int: String] = [:]
        /// Messages queued in this pass of the loop, sent when it ends (`flushOutboxes`).
        var outbox: [String] = []
        init(connection: WebSocketConnection, number: Int) {
            self.connection = connection
            self.number = number
        }
    }

    public init(options: Options) throws {
        self.options = options
        var loopOptions = WebSocketEventLoop.Options()
        loopOptions.listen = ("127.0.0.1", options.port)
        loopOptions.fragmentSize = options.fragmentSize
        loopOptions.maximumMessageSize = options.maximumMessageSize
        loopOptions.serverCertificate = options.tlsCertificate
        loopOptions.name = "ha-simulator"
        loop = try WebSocketEventLoop(options: loopOptions)
        port = loop.listenPort
        loop.onAccept = { [weak self] connection in self?.accepted(connection) }
        loop.start()
        loop.perform { [loop] in loop.afterEachPass { [weak self] in self?.flushOutboxes() } }
    }

    public convenience init(token: String) throws {
        try self.init(options: Options(token: token))
    }

    /// Stops listening and drops every client.
    public func stop() {
        loop.shutdown()
        let pending = waiters.withLock { w in defer { w = [:] }; return Array(w.values) }
        for waiter in pending { waiter.continuation.resume(returning: false) }
    }

    // MARK: Script

    /// Sets an entity's state and attributes (all of them), as an integration would. `lastChanged` moves only
    /// when the state string changes.
    public func setState(_ entityID: String, _ state: String, attributes: [String: JSONValue] = [:]) async {
        await onLoop { sim in sim.applyState(entityID, state, attributes: attributes) }
    }

    /// Many changes in one hop to the loop: for floods. Each state's attributes get `t`, the time it left the simulator.
    public func setStates(_ changes: [(entityID: String, state: String, attributes: [String: JSONValue])], stamp: Bool = false) async {
        await onLoop { sim in
            for change in changes {
                var attributes = change.attributes
                if stamp { attributes["t"] = .double(Date().timeIntervalSince1970) }
                sim.applyState(change.entityID, change.state, attributes: attributes)
            }
        }
    }

    /// The entity, device and area registries' entries (`entity_id`/`device_id`/`area_id`, `name`, …), as
    /// `config/entity_registry/list` and its siblings give them.
    public func setRegistries(entities: [JSONValue], devices: [JSONValue], areas: [JSONValue]) async {
        await onLoop { sim in
            sim.registries = ["entity": .array(entities), "device": .array(devices), "area": .array(areas)]
        }
    }

    /// Refuses the registries with `unauthorized`, as for a user who is not an administrator.
    public func setRegistriesRefused(_ refused: Bool) async {
        await onLoop { sim in sim.registriesRefused = refused }
    }

    public func remove(_ entityID: String) async {
        await onLoop { sim in
            guard let old = sim.entities.removeValue(forKey: entityID) else { return }
            sim.broadcastEntity(entityID, old: old, new: nil)
        }
    }

    /// Adds `count` entities `sensor.padding_N` whose attributes make the snapshot about `totalBytes` larger.
    public func addPadding(totalBytes: Int, count: Int = 20) async {
        let each = max(1, totalBytes / count)
        let blob = String(repeating: "x", count: each)
        await onLoop { sim in
            for n in 0..<count { sim.applyState("sensor.padding_\(n)", "on", attributes: ["blob": .string(blob)]) }
        }
    }

    /// Sets what render_template gives for `template` and pushes it to every subscription to it, as Home Assistant
    /// does when what the template reads changes.
    public func setRendering(_ template: String, _ result: JSONValue) async {
        await onLoop { sim in
            sim.renderings[template] = result
            for client in sim.clients.values where client.authenticated {
                for (id, subscribed) in client.templateSubscriptions where subscribed == template {
                    sim.send(sim.renderingEvent(id, template), to: client)
                }
            }
        }
    }

    /// Refuses render_template from now on with this error (nil: answers again).
    public func refuseRenderTemplate(_ error: HomeAssistantError?) async {
        await onLoop { sim in sim.renderTemplateError = error }
    }

    public func fireEvent(_ type: String, data: JSONValue) async {
        await onLoop { sim in sim.broadcastEvent(type, data: data) }
    }

    /// Drops every client and comes back in `coreState` (STARTING by default), as a restarting Home Assistant does.
    /// `entitiesWhileStarting`, when given, are the only entities known until `setCoreState("RUNNING")`.
    public func restart(coreState: String = "STARTING", entitiesWhileStarting: [String]? = nil) async {
        await onLoop { sim in
            sim.coreState = coreState
            for client in sim.clients.values { client.connection.abort(reason: "restart") }
            if let keep = entitiesWhileStarting {
                sim.stashedEntities = sim.entities
                sim.entities = sim.entities.filter { keep.contains($0.key) }
            }
        }
    }

    private var stashedEntities: [String: SimulatedEntity]?

    /// Moves Home Assistant's core state; RUNNING brings back entities hidden by `restart(entitiesWhileStarting:)`.
    public func setCoreState(_ state: String) async {
        await onLoop { sim in
            sim.coreState = state
            if state == "RUNNING", let stashed = sim.stashedEntities {
                sim.stashedEntities = nil
                for (id, entity) in stashed.sorted(by: { $0.key < $1.key }) where sim.entities[id] == nil {
                    sim.entities[id] = entity
                    sim.broadcastEntity(id, old: nil, new: entity)
                }
            }
        }
    }

    /// While false, `ping` gets no `pong`: the link looks alive but is dead.
    public func setAnswersPings(_ answers: Bool) async {
        await onLoop { sim in sim.answersPings = answers }
    }

    /// Each `pong` goes this long after its `ping`: a slow link, or a pong that reaches a client busy elsewhere.
    public func setPongDelay(_ delay: Duration) async {
        await onLoop { sim in sim.pongDelay = delay }
    }

    /// While true, auth_invalid's message quotes the token the client sent (as a hostile or careless server might).
    public func setEchoesTokens(_ echoes: Bool) async {
        await onLoop { sim in sim.echoesTokens = echoes }
    }

    /// While true the server accepts sockets but says nothing and answers nothing: not even auth_required.
    public func setUnresponsive(_ silent: Bool) async {
        await onLoop { sim in sim.unresponsive = silent }
    }

    /// Drops every client's socket without a closing handshake.
    public func dropConnections() async {
        await onLoop { sim in for client in sim.clients.values { client.connection.abort(reason: "dropped") } }
    }

    /// Sends raw text to every authenticated client (malformed JSON, unknown messages…).
    public func sendRaw(_ text: String) async {
        await onLoop { sim in
            for client in sim.clients.values where client.authenticated {
                sim.flush(client)
                client.connection.send(text)
            }
        }
    }

    /// Sends bytes as a text message to every authenticated client, valid UTF-8 or not.
    public func sendRawBytes(_ bytes: [UInt8]) async {
        await onLoop { sim in
            for client in sim.clients.values where client.authenticated {
                sim.flush(client)
                client.connection.send(bytes: bytes)
            }
        }
    }

    /// What `get_services` lists, by domain; nil: every service called so far that does not fail.
    public func listServices(_ services: [String: [String]]?) async {
        await onLoop { sim in sim.listedServices = services }
    }

    /// Makes `domain.service` answer with this error.
    public func failService(_ service: String, with error: HomeAssistantError) async {
        await onLoop { sim in sim.serviceErrors[service] = error }
    }

    public var record: SimulatorRecord { recorded.withLock { $0 } }

    /// Waits until `predicate` holds for the record, or `timeout` passes. Returns whether it held.
    public func wait(timeout: Duration = .seconds(30), until predicate: @escaping @Sendable (SimulatorRecord) -> Bool) async -> Bool {
        let key = UUID()
        let loop = self.loop
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.resolveWaiter(key, result: false)
        }
        defer { timer.cancel() }
        _ = loop
        return await withCheckedContinuation { continuation in
            let holdsNow = recorded.withLock { record -> Bool in
                if predicate(record) { return true }
                waiters.withLock { $0[key] = (predicate, continuation) }
                return false
            }
            if holdsNow { continuation.resume(returning: true) }
        }
    }

    private func resolveWaiter(_ key: UUID, result: Bool) {
        if let waiter = waiters.withLock({ $0.removeValue(forKey: key) }) { waiter.continuation.resume(returning: result) }
    }

    private func updateRecord(_ change: (inout SimulatorRecord) -> Void) {
        let ready = recorded.withLock { record -> [CheckedContinuation<Bool, Never>] in
            change(&record)
            return waiters.withLock { waiters in
                let done = waiters.filter { $0.value.predicate(record) }
                for key in done.keys { waiters[key] = nil }
                return done.values.map(\.continuation)
            }
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    private func onLoop(_ work: @escaping @Sendable (HomeAssistantSimulator) -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.perform { [self] in
                work(self)
                continuation.resume()
            }
            // Stopped: nothing to do on a loop that is gone.
            if !accepted { continuation.resume() }
        }
    }

    // MARK: Entities (loop thread)

    private var now: Double { Date().timeIntervalSince1970 }

    private func nextContext() -> String {
        contextCounter += 1
        return "01SIM" + String(contextCounter)
    }

    private func applyState(_ entityID: String, _ state: String, attributes: [String: JSONValue]) {
        let time = now
        let old = entities[entityID]
        var entity = old ?? SimulatedEntity(state: state, attributes: attributes, lastChanged: time, lastUpdated: time,
                                            contextID: "")
        if let old, old.state != state { entity.lastChanged = time }
        entity.state = state
        entity.attributes = attributes
        entity.lastUpdated = time
        entity.contextID = nextContext()
        if let old, old.state == entity.state, old.attributes == entity.attributes { return }
        entities[entityID] = entity
        broadcastEntity(entityID, old: old, new: entity)
    }

    private func broadcastEntity(_ entityID: String, old: SimulatedEntity?, new: SimulatedEntity?) {
        let compressed: JSONValue
        switch (old, new) {
        case (nil, let new?): compressed = ["a": .object([entityID: new.compressed])]
        case (let old?, let new?): compressed = ["c": .object([entityID: new.diff(from: old)])]
        case (_?, nil): compressed = ["r": [.string(entityID)]]
        case (nil, nil): return
        }
        for client in clients.values where client.authenticated {
            for (id, filter) in client.entitySubscriptions.sorted(by: { $0.key < $1.key }) {
                if let filter, !filter.contains(entityID) { continue }
                sendEvent(compressed, subscription: id, to: client)
            }
        }
        let data: JSONValue = [
            "entity_id": .string(entityID), "old_state": old.map { $0.full(entityID: entityID) } ?? .null,
            "new_state": new.map { $0.full(entityID: entityID) } ?? .null,
        ]
        broadcastEvent("state_changed", data: data)
    }

    private func broadcastEvent(_ type: String, data: JSONValue) {
        let event: JSONValue = [
            "event_type": .string(type), "data": data, "origin": "LOCAL",
            "time_fired": .string(Timestamp.iso8601(now)), "context": ["id": .string(nextContext())],
        ]
        for client in clients.values where client.authenticated {
            for (id, subscribed) in client.eventSubscriptions where subscribed == type || subscribed == "*" {
                send(["id": .int(id), "type": "event", "event": event], to: client)
            }
        }
    }

    // MARK: Protocol (loop thread)

    private func accepted(_ connection: WebSocketConnection) {
        var number = 0
        updateRecord { record in
            record.connectionsAccepted += 1
            record.openConnections += 1
            number = record.connectionsAccepted
        }
        let client = Client(connection: connection, number: number)
        clients[ObjectIdentifier(connection)] = client
        connection.delegate = self
        guard !unresponsive else { return }
        send(["type": "auth_required", "ha_version": .string(options.haVersion)], to: client)
    }

    /// Queues a message; it goes out when this pass of the loop ends.
    private func send(_ message: JSONValue, to client: Client) {
        client.outbox.append(message.jsonText)
    }

    /// An entity subscription's change laid out as Home Assistant 2026.11's writer lays it out
    /// (`cached_state_diff_message`: `type`, the event, then the subscriber's id appended), which LiveBridge reads in
    /// place; its first event, the snapshot, id first (`_send_handle_entities_init_response`). Other messages keep
    /// this encoder's sorted keys.
    private func sendEvent(_ event: JSONValue, subscription id: Int, to client: Client, isSnapshot: Bool = false) {
        client.outbox.append(isSnapshot ? #"{"id":"# + String(id) + #","type":"event","event":"# + event.jsonText + "}"
                                        : #"{"type":"event","event":"# + event.jsonText + #","id":"# + String(id) + "}")
    }

    /// Sends what each client's pass queued as Home Assistant's writer does: one message alone, several in one JSON
    /// array frame when the client asked for coalescing (`supported_features`), else one frame each.
    private func flushOutboxes() {
        for client in clients.values where !client.outbox.isEmpty { flush(client) }
    }

    private func flush(_ client: Client) {
        let messages = client.outbox
        client.outbox = []
        if client.coalesce && options.coalesces && messages.count > 1 {
            client.connection.send("[" + messages.joined(separator: ",") + "]")
        } else {
            for message in messages { client.connection.send(message) }
        }
    }

    private func handle(_ message: JSONValue, from client: Client) {
        guard let type = message["type"]?.stringValue else { return }
        if !client.authenticated {
            guard type == "auth" else { return }
            let accepted = message["access_token"]?.stringValue == options.token
            updateRecord { record in
                record.authAttempts += 1
                if !accepted { record.authRejections += 1 }
            }
            if accepted {
                client.authenticated = true
                send(["type": "auth_ok", "ha_version": .string(options.haVersion)], to: client)
            } else {
                let presented = echoesTokens ? ": " + (message["access_token"]?.stringValue ?? "") : ""
                send(["type": "auth_invalid", "message": .string("Invalid access token or password" + presented)], to: client)
                flush(client)
                client.connection.close(reason: "auth_invalid")
            }
            return
        }
        guard let id = message["id"]?.intValue else {
            send(["type": "result", "success": false, "error": ["code": "invalid_format", "message": "Message incorrectly formatted."]], to: client)
            return
        }
        updateRecord { $0.commands.append(.init(connection: client.number, id: id, type: type, message: message)) }
        guard id > client.lastID else {
            send(error(id, "id_reuse", "Identifier values have to increase."), to: client)
            return
        }
        client.lastID = id
        switch type {
        case "supported_features":
            client.coalesce = message["features"]?["coalesce_messages"]?.intValue == 1
            send(success(id, .null), to: client)
        case "ping":
            if answersPings {
                if pongDelay == .zero { send(["id": .int(id), "type": "pong"], to: client) } else {
                    loop.schedule(after: pongDelay) { [self] in send(["id": .int(id), "type": "pong"], to: client) }
                }
            }
        case "get_config":
            send(success(id, ["state": .string(coreState), "version": .string(options.haVersion),
                              "location_name": "Simulated home", "time_zone": "UTC", "unit_system": ["temperature": "°C"]]), to: client)
        case "get_states":
            let states = entities.keys.sorted().map { entities[$0]!.full(entityID: $0) }
            send(success(id, .array(states)), to: client)
        case "subscribe_entities":
            let filter = message["entity_ids"]?.arrayValue.map { Set($0.compactMap(\.stringValue)) }
            client.entitySubscriptions[id] = .some(filter)
            var snapshot: [String: JSONValue] = [:]
            for (entityID, entity) in entities where filter?.contains(entityID) ?? true {
                snapshot[entityID] = entity.compressed
            }
            send(success(id, .null), to: client)
            sendEvent(["a": .object(snapshot)], subscription: id, to: client, isSnapshot: true)
        case "subscribe_events":
            client.eventSubscriptions[id] = message["event_type"]?.stringValue ?? "*"
            send(success(id, .null), to: client)
        case "render_template":
            if let failure = renderTemplateError {
                send(error(id, failure.code.rawValue, failure.message), to: client)
                return
            }
            let template = message["template"]?.stringValue ?? ""
            client.templateSubscriptions[id] = template
            send(success(id, .null), to: client)
            send(renderingEvent(id, template), to: client)
        case "unsubscribe_events":
            guard let subscription = message["subscription"]?.intValue,
                  client.eventSubscriptions.removeValue(forKey: subscription) != nil
                    || client.entitySubscriptions.removeValue(forKey: subscription) != nil
                    || client.templateSubscriptions.removeValue(forKey: subscription) != nil
            else {
                send(error(id, "not_found", "Subscription not found."), to: client)
                return
            }
            send(success(id, .null), to: client)
        case "call_service":
            updateRecord { $0.serviceCalls.append(message) }
            let name = (message["domain"]?.stringValue ?? "") + "." + (message["service"]?.stringValue ?? "")
            if let failure = serviceErrors[name] {
                send(error(id, failure.code.rawValue, failure.message), to: client)
            } else {
                send(success(id, ["context": ["id": .string(nextContext()), "parent_id": nil, "user_id": nil]]), to: client)
            }
        case "get_services":
            var byDomain: [String: JSONValue] = [:]
            let listed = listedServices ?? Dictionary(grouping: recorded.withLock { $0.serviceCalls }.compactMap { call -> (String, String)? in
                guard let domain = call["domain"]?.stringValue, let service = call["service"]?.stringValue,
                      serviceErrors[domain + "." + service] == nil else { return nil }
                return (domain, service)
            }, by: \.0).mapValues { $0.map(\.1) }
            for (domain, names) in listed { byDomain[domain] = .object(Dictionary(names.map { ($0, JSONValue.object([:])) }, uniquingKeysWith: { a, _ in a })) }
            send(success(id, .object(byDomain)), to: client)
        case "config/entity_registry/list", "config/device_registry/list", "config/area_registry/list":
            if registriesRefused {
                send(error(id, "unauthorized", "Unauthorized"), to: client)
            } else {
                let registry = String(type.dropFirst("config/".count).prefix { $0 != "_" })
                send(success(id, registries[registry] ?? .array([])), to: client)
            }
        default:
            send(error(id, "unknown_command", "Unknown command."), to: client)
        }
    }

    /// A render_template event: the result set for the template, or Home Assistant's error for one it cannot render.
    private func renderingEvent(_ id: Int, _ template: String) -> JSONValue {
        guard let result = renderings[template] else {
            return ["id": .int(id), "type": "event", "event": ["error": .string("UndefinedError: no rendering set for \(template)"), "level": "ERROR"]]
        }
        return ["id": .int(id), "type": "event", "event": ["result": result, "listeners": ["all": false, "entities": [], "domains": [], "time": false]]]
    }

    private func success(_ id: Int, _ result: JSONValue) -> JSONValue {
        ["id": .int(id), "type": "result", "success": true, "result": result]
    }

    private func error(_ id: Int, _ code: String, _ message: String) -> JSONValue {
        ["id": .int(id), "type": "result", "success": false, "error": ["code": .string(code), "message": .string(message)]]
    }
}

extension HomeAssistantSimulator: WebSocketConnectionDelegate {
    public func connectionDidOpen(_ connection: WebSocketConnection) {}

    public func connection(_ connection: WebSocketConnection, didReceive message: [UInt8]) {
        guard let client = clients[ObjectIdentifier(connection)] else { return }
        guard !unresponsive else { return updateRecord { $0.unanswered += 1 } }
        guard let value = try? JSONParser.parse(message) else {
            send(["type": "result", "success": false, "error": ["code": "invalid_format", "message": "Message incorrectly formatted."]], to: client)
            return
        }
        handle(value, from: client)
    }

    public func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason) {
        guard clients.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        updateRecord { $0.openConnections -= 1 }
    }
}
