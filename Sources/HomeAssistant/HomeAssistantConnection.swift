import FoundationEssentials
import Platform
import JSON
import Synchronization
import WebSocketTransport

/// A long-lived client of Home Assistant's WebSocket API.
///
/// It authenticates, waits for Home Assistant to be RUNNING, subscribes to the entities and events
/// asked for, keeps an `EntityStore` of them, pings to notice a dead link, and reconnects with
/// back-off, re-subscribing everything, until stopped or until the token is rejected.
///
/// All protocol work runs on the thread of its own `WebSocketEventLoop`; the public methods are
/// safe from any thread and hand their work to that loop.
public final class HomeAssistantConnection: @unchecked Sendable {
    /// The settings in force: those given at start, or the last `reconfigure`.
    public var configuration: ConnectionConfiguration { sharedConfiguration.withLock { $0 } }
    private let sharedConfiguration: Locked<ConnectionConfiguration>
    /// Entity changes, latest per entity, starting with each entity's state in the first snapshot.
    public let changes = EntityChangeFeed()

    private let loop: WebSocketEventLoop
    private let onEvent: @Sendable (ConnectionEvent) -> Void
    private let sharedPhase = Locked(ConnectionPhase.idle)
    private let receivedChanges = Atomic<Int>(0)

    /// Entities asked for that Home Assistant did not have at the last snapshot (less those that appeared since).
    public var missingEntities: [MissingEntity] { sharedMissing.withLock { $0 } }
    private let sharedMissing = Locked<[MissingEntity]>([])

    /// Entity changes received from Home Assistant so far (before the feed coalesces them).
    public var receivedChangeCount: Int { receivedChanges.load(ordering: .relaxed) }

    // Everything below is confined to the loop thread.
    /// `configuration`, as the loop reads it on every message.
    private var settings: ConnectionConfiguration
    private var socket: WebSocketConnection?
    private var phase = ConnectionPhase.idle {
        didSet { let value = phase; sharedPhase.withLock { $0 = value } }
    }
    private var nextID = 1
    private var attempt = 0
    private var generation = 0
    private var closeReason: String?
    private var inFlight: [Int: Request] = [:]
    private var queued: [Request] = []
    private var store = EntityStore()
    /// Changes taken in during this pass over the socket, handed to `changes` together when it ends.
    private var arrivedChanges: [EntityChange] = []
    /// What to keep (nil: nothing). The store keeps these instances of the ids rather than its own copies.
    private var entityFilter: EntitySelection? {
        didSet { store.share(entityFilter ?? .nothing) }
    }
    private var entitySubscriptionID: Int?
    private var awaitingSnapshot = false
    private var reportedStartupWait = false
    private var eventHandlers: [String: [UUID: AsyncStream<JSONValue>.Continuation]] = [:]
    private var eventSubscriptionIDs: [Int: String] = [:]
    private var templateHandlers: [String: [UUID: AsyncStream<TemplateRendering>.Continuation]] = [:]
    private var templateSubscriptionIDs: [Int: String] = [:]
    private var connectionTimers: [WebSocketEventLoop.TimerToken] = []
    private var pongTimer: WebSocketEventLoop.TimerToken?
    private var reconnectTimer: WebSocketEventLoop.TimerToken?
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []

    public init(configuration: ConnectionConfiguration, onEvent: @escaping @Sendable (ConnectionEvent) -> Void = { _ in }) throws {
        self.sharedConfiguration = Locked(configuration)
        self.settings = configuration
        self.onEvent = onEvent
        var options = WebSocketEventLoop.Options()
        options.maximumMessageSize = configuration.maximumMessageSize
        options.name = "homeassistant"
        // One connection to Home Assistant (and its redial while the old one closes).
        options.maximumConnections = 4
        options.usesTLS = false
        if case .tls(let caFile, _) = configuration.endpoint.security {
            options.usesTLS = true
            options.clientCAFile = caFile
        }
        loop = try WebSocketEventLoop(options: options)
        loop.start()
        loop.perform { [self] in loop.afterEachPass { [weak self] in self?.publishChanges() } }
    }

    // MARK: Public API

    /// Where the connection stands now.
    public var currentPhase: ConnectionPhase { sharedPhase.withLock { $0 } }

    /// Starts connecting. `entityIDs` are the entities to keep (nil: none, only events and commands).
    public func start(entityIDs: [String]?) {
        start(selection: entityIDs.map { EntitySelection(entityIDs: $0) })
    }

    /// Starts connecting, keeping the entities `selection` names (nil: none, only events and commands).
    public func start(selection: EntitySelection?) {
        loop.perform { [self] in
            guard phase == .idle else { return }
            entityFilter = selection
            connect()
        }
    }

    /// Why new settings cannot be taken without a restart.
    public struct NeedsRestart: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// New settings (a rotated token, another URL): the socket is dropped and dialled again with them at once.
    /// What the event loop was made with cannot change in place: plain ws:// against wss://, the CA file, the
    /// message size cap.
    public func reconfigure(_ new: ConnectionConfiguration) throws(NeedsRestart) {
        let old = configuration
        let usesTLS = { (c: ConnectionConfiguration) -> Bool in if case .tls = c.endpoint.security { true } else { false } }
        let caFile = { (c: ConnectionConfiguration) -> String? in if case .tls(let file, _) = c.endpoint.security { file } else { nil } }
        guard usesTLS(new) == usesTLS(old), caFile(new) == caFile(old), new.maximumMessageSize == old.maximumMessageSize else {
            throw NeedsRestart(description: "a change between ws:// and wss://, of ca_file or of the message size takes a restart")
        }
        guard currentPhase != .rejected else {
            throw NeedsRestart(description: "Home Assistant rejected the old token and the connection has stopped; restart to use the new one")
        }
        sharedConfiguration.withLock { $0 = new }
        loop.perform { [self] in
            settings = new
            attempt = 0
            switch phase {
            case .stopped, .rejected, .idle: return
            case .disconnected:
                if let reconnectTimer { loop.cancel(reconnectTimer) }
                reconnectTimer = nil
                connect()
            default:
                abortSocket(reason: "Home Assistant settings changed; reconnecting with the new ones")
            }
        }
    }

    /// Changes the set of entities kept; re-subscribes if connected.
    public func setEntities(_ entityIDs: [String]) {
        setSelection(EntitySelection(entityIDs: entityIDs))
    }

    /// Changes what is kept; re-subscribes if connected.
    public func setSelection(_ filter: EntitySelection) {
        loop.perform { [self] in
            guard filter != entityFilter else { return }
            entityFilter = filter
            guard phase == .ready || phase == .subscribing else { return }
            if let id = entitySubscriptionID {
                sendNow(["type": "unsubscribe_events", "subscription": .int(id)]) { _ in }
            }
            subscribeEntities()
        }
    }

    /// Events of one type (`state_changed`, a custom event…), subscribed now and after every reconnect.
    /// A consumer more than 4096 events behind loses the oldest.
    public func events(ofType type: String) -> AsyncStream<JSONValue> {
        stream(of: type, in: \.eventHandlers, bufferingNewest: 4096) { connection in connection.subscribeEvents(type) }
    }

    /// Home Assistant's renderings of a template (`render_template`): the first at once, then a new one whenever
    /// what the template reads changes; subscribed now and after every reconnect. Only the newest is kept for a
    /// consumer that is behind.
    public func renderings(of template: String) -> AsyncStream<TemplateRendering> {
        stream(of: template, in: \.templateHandlers, bufferingNewest: 1) { connection in connection.subscribeTemplate(template) }
    }

    /// A stream fed by the subscription `subject` names in `handlers`: the first consumer of a subject subscribes it
    /// (now if authenticated; `authenticated` subscribes every subject again after a reconnect). A stopped
    /// connection gives a finished stream.
    private func stream<Value: Sendable>(of subject: String,
                                         in handlers: ReferenceWritableKeyPath<HomeAssistantConnection, [String: [UUID: AsyncStream<Value>.Continuation]]>,
                                         bufferingNewest limit: Int,
                                         subscribe: @escaping @Sendable (HomeAssistantConnection) -> Void) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(limit))
        let key = UUID()
        nonisolated(unsafe) let handlers = handlers
        let accepted = loop.perform { [self] in
            let isNew = self[keyPath: handlers][subject] == nil
            self[keyPath: handlers][subject, default: [:]][key] = continuation
            if isNew && isAuthenticated { subscribe(self) }
        }
        guard accepted else { continuation.finish(); return stream }
        let loop = self.loop
        continuation.onTermination = { [weak self] _ in
            loop.perform { [weak self] in self?[keyPath: handlers][subject]?[key] = nil }
        }
        return stream
    }

    /// Sends a command (without `id`) and returns its result. Waits for the connection if it is down;
    /// fails with `timeout` after `requestTimeout`, `disconnected` if the link drops before the result.
    public func send(_ command: [String: JSONValue]) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, Error>) in
            let accepted = loop.perform { [self] in
                let request = Request(command: command) { continuation.resume(with: $0.mapError { $0 as Error }) }
                enqueue(request)
            }
            if !accepted { continuation.resume(throwing: HomeAssistantError.stopped) }
        }
    }

    /// `call_service`: `domain.service` with data and an optional target.
    public func callService(domain: String, service: String, data: [String: JSONValue] = [:],
                            target: [String: JSONValue]? = nil) async throws -> JSONValue {
        var command: [String: JSONValue] = ["type": "call_service", "domain": .string(domain), "service": .string(service)]
        if !data.isEmpty { command["service_data"] = .object(data) }
        if let target { command["target"] = .object(target) }
        return try await send(command)
    }

    /// `get_config`: Home Assistant's configuration, including its `state` (RUNNING, STARTING…).
    public func getConfig() async throws -> JSONValue {
        try await send(["type": "get_config"])
    }

    /// The entities held now.
    public func currentStates() async -> [EntityState] {
        await withCheckedContinuation { continuation in
            let accepted = loop.perform { [self] in
                continuation.resume(returning: store.states.values.sorted { $0.entityID < $1.entityID })
            }
            if !accepted { continuation.resume(returning: []) }
        }
    }

    /// Closes the socket and stops the loop. Pending requests fail with `stopped`.
    public func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.perform { [self] in
                guard phase != .stopped else { continuation.resume(); return }
                let wasOpen = socket != nil
                enterFinalPhase(.stopped, failure: .stopped, closeReason: "LiveBridge is stopping")
                emit(.stopped)
                if wasOpen {
                    stopWaiters.append(continuation)
                    loop.schedule(after: .seconds(2)) { [self] in resumeStopWaiters() }
                } else {
                    continuation.resume()
                }
            }
            // Stopped already: the loop is gone.
            if !accepted { continuation.resume() }
        }
        let eventLoop = self.loop
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DetachedThread.start {
                eventLoop.shutdown()
                done.resume()
            }
        }
    }

    // MARK: Connecting

    private var isAuthenticated: Bool {
        phase == .waitingForStartup || phase == .subscribing || phase == .ready
    }

    private func connect() {
        loop.preconditionInEventLoop()
        generation += 1
        closeReason = nil
        reportedStartupWait = false
        phase = .connecting
        emit(.connecting(url: settings.displayURL, attempt: attempt))
        let socket = loop.connect(to: settings.endpoint, delegate: self)
        self.socket = socket
        let timeout = settings.handshakeTimeout
        addTimer(after: timeout) { [self] in
            guard phase == .connecting else { return }
            abortSocket(reason: "no WebSocket handshake within \(ConnectionEvent.seconds(timeout))")
        }
    }

    private func addTimer(after delay: Duration, _ work: @escaping () -> Void) {
        let expected = generation
        connectionTimers.append(loop.schedule(after: delay) { [self] in
            guard generation == expected else { return }
            work()
        })
    }

    private func abortSocket(reason: String) {
        closeReason = closeReason ?? reason
        socket?.abort(reason: reason)
    }

    private func cancelConnectionTimers() {
        for timer in connectionTimers { loop.cancel(timer) }
        connectionTimers = []
        if let pongTimer { loop.cancel(pongTimer) }
        pongTimer = nil
    }

    private func scheduleReconnect() {
        loop.preconditionInEventLoop()
        let delay = settings.reconnect.delay(attempt: attempt, random: Double.random(in: 0..<1))
        attempt += 1
        phase = .disconnected
        emit(.reconnecting(after: delay))
        reconnectTimer = loop.schedule(after: delay) { [self] in
            reconnectTimer = nil
            guard phase == .disconnected else { return }
            connect()
        }
    }

    /// Rejected or stopped: nothing more will be attempted.
    private func enterFinalPhase(_ final: ConnectionPhase, failure: HomeAssistantError, closeReason reason: String) {
        phase = final
        cancelConnectionTimers()
        if let reconnectTimer { loop.cancel(reconnectTimer) }
        reconnectTimer = nil
        failAll(with: failure)
        closeReason = closeReason ?? reason
        socket?.close(reason: reason)
        publishChanges()
        changes.finish()
        for handlers in eventHandlers.values { for continuation in handlers.values { continuation.finish() } }
        eventHandlers = [:]
        for handlers in templateHandlers.values { for continuation in handlers.values { continuation.finish() } }
        templateHandlers = [:]
    }

    private func resumeStopWaiters() {
        let waiters = stopWaiters
        stopWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Requests

    /// A command waiting for its result.
    private final class Request {
        let command: [String: JSONValue]
        let completion: (Result<JSONValue, HomeAssistantError>) -> Void
        var isDone = false
        var timer: WebSocketEventLoop.TimerToken?

        init(command: [String: JSONValue], completion: @escaping (Result<JSONValue, HomeAssistantError>) -> Void) {
            self.command = command
            self.completion = completion
        }

        func finish(_ result: Result<JSONValue, HomeAssistantError>) {
            guard !isDone else { return }
            isDone = true
            completion(result)
        }

        var type: String { command["type"]?.stringValue ?? "command" }
    }

    private func enqueue(_ request: Request) {
        loop.preconditionInEventLoop()
        switch phase {
        case .stopped: request.finish(.failure(.stopped)); return
        case .rejected: request.finish(.failure(.rejected)); return
        default: break
        }
        request.timer = loop.schedule(after: settings.requestTimeout) { [self] in
            request.finish(.failure(.timeout(request.type)))
            queued.removeAll { $0 === request }
        }
        if isAuthenticated { write(request) } else { queued.append(request) }
    }

    private func flushQueued() {
        let waiting = queued.filter { !$0.isDone }
        queued = []
        for request in waiting { write(request) }
    }

    /// Allocates the next id and writes the frame: on one thread, so ids go out strictly increasing.
    @discardableResult
    private func write(_ request: Request) -> Int {
        let id = nextID
        nextID += 1
        var command = request.command
        command["id"] = .int(id)
        inFlight[id] = request
        socket?.send(JSONValue.object(command).jsonText)
        return id
    }

    @discardableResult
    private func sendNow(_ command: [String: JSONValue], completion: @escaping (Result<JSONValue, HomeAssistantError>) -> Void) -> Int {
        write(Request(command: command, completion: completion))
    }

    private func failAll(with error: HomeAssistantError) {
        let requests = Array(inFlight.values) + queued
        inFlight = [:]
        queued = []
        for request in requests {
            if let timer = request.timer { loop.cancel(timer) }
            request.finish(.failure(error))
        }
    }

    // MARK: After authentication

    private func authenticated(version: String?) {
        cancelConnectionTimers()
        phase = .waitingForStartup
        emit(.authenticated(haVersion: version))
        sendNow(["type": "supported_features", "features": ["coalesce_messages": 1]]) { _ in }
        schedulePing()
        for type in eventHandlers.keys.sorted() { subscribeEvents(type) }
        for template in templateHandlers.keys.sorted() { subscribeTemplate(template) }
        flushQueued()
        checkCoreState()
    }

    /// The snapshot is trusted only once Home Assistant says RUNNING: before that, integrations are still
    /// loading and entities would seem to vanish.
    private func checkCoreState() {
        let expected = generation
        sendNow(["type": "get_config"]) { [self] result in
            guard generation == expected, phase == .waitingForStartup else { return }
            let state = (try? result.get())?["state"]?.stringValue ?? "RUNNING"
            if state == "RUNNING" {
                subscribeEntities()
                return
            }
            if !reportedStartupWait {
                reportedStartupWait = true
                emit(.waitingForStartup(coreState: state))
            }
            addTimer(after: settings.startupPollInterval) { [self] in checkCoreState() }
        }
    }

    private func subscribeEntities() {
        guard let filter = entityFilter else {
            phase = .ready
            wasReady = true
            resetBackOffWhenStable()
            emit(.ready(entities: 0))
            return
        }
        phase = .subscribing
        if settings.entitySource == .stateChanged {
            followStateChanged(filter)
            return
        }
        awaitingSnapshot = true
        let expected = generation
        // Registered before the command goes out: the result and the snapshot can arrive in one frame.
        // Home Assistant filters by id only: for a domain a template iterates, every entity comes and the store
        // keeps the selected ones.
        let command: [String: JSONValue] = filter.needsEveryEntity ? ["type": "subscribe_entities"]
            : ["type": "subscribe_entities", "entity_ids": .array(filter.entityIDs.map(JSONValue.string))]
        entitySubscriptionID = sendNow(command) {
            [self] result in
            guard generation == expected, case .failure(let error) = result else { return }
            emit(.warning("subscribe_entities failed: \(error)"))
            abortSocket(reason: "could not subscribe to entities")
        }
    }

    /// The fallback: subscribe to state_changed first (so nothing falls between), then take `get_states` as the snapshot.
    /// Events before the snapshot are dropped: the snapshot already holds their outcome.
    private func followStateChanged(_ watched: EntitySelection) {
        let expected = generation
        stateChangedFilter = watched
        awaitingSnapshot = true
        entitySubscriptionID = sendNow(["type": "subscribe_events", "event_type": "state_changed"]) { [self] result in
            guard generation == expected, case .failure(let error) = result else { return }
            emit(.warning("subscribe_events state_changed failed: \(error)"))
            abortSocket(reason: "could not subscribe to state_changed")
        }
        sendNow(["type": "get_states"]) { [self] result in
            guard generation == expected else { return }
            guard case .success(.array(let states)) = result else {
                emit(.warning("get_states failed"))
                abortSocket(reason: "could not read the states")
                return
            }
            awaitingSnapshot = false
            snapshotArrived(store.replace(withFullStates: states, keeping: watched),
                            knownIDs: states.compactMap { $0["entity_id"]?.stringValue })
        }
    }

    private var stateChangedFilter = EntitySelection.nothing

    /// One state_changed event: a watched entity's new state, or its removal.
    private func stateChangedEvent(_ event: JSONText) {
        guard !awaitingSnapshot else { return }
        do {
            guard let (id, newState) = try StateChangedEvent.read(event, watching: stateChangedFilter) else { return }
            changesArrived(store.set(id, fullState: newState))
        } catch {
            emit(.warning("ignored a malformed state_changed event: \(error)"))
        }
    }

    private func subscribeEvents(_ type: String) {
        let id = sendNow(["type": "subscribe_events", "event_type": .string(type)]) { [self] result in
            if case .failure(let error) = result {
                emit(.warning("subscribe_events \(type) failed: \(error)"
                    + (error.code == .unauthorized ? " (custom events need an administrator's token)" : "")))
            }
        }
        eventSubscriptionIDs[id] = type
    }

    private func subscribeTemplate(_ template: String) {
        let id = sendNow(["type": "render_template", "template": .string(template), "report_errors": true]) { [self] result in
            guard case .failure(let error) = result, error != .disconnected, error != .stopped else { return }
            for continuation in (templateHandlers[template] ?? [:]).values { continuation.yield(TemplateRendering(refusal: error)) }
        }
        templateSubscriptionIDs[id] = template
    }

    private func schedulePing() {
        addTimer(after: settings.pingInterval) { [self] in
            let id = sendNow(["type": "ping"]) { _ in }
            let timeout = settings.pongTimeout
            let expected = generation
            pongTimer = loop.schedule(after: timeout) { [self] in
                guard generation == expected, inFlight[id] != nil else { return }
                abortSocket(reason: "no pong within \(ConnectionEvent.seconds(timeout))")
            }
        }
    }

    // MARK: Incoming

    private func handle(_ message: ServerMessage) {
        loop.preconditionInEventLoop()
        switch message {
        case .authRequired:
            let auth: JSONValue = ["type": "auth", "access_token": .string(settings.token.secret)]
            socket?.send(auth.jsonText)
        case .authOK(let version):
            authenticated(version: version)
        case .authInvalid(let message):
            emit(.rejected(message: message))
            enterFinalPhase(.rejected, failure: .rejected, closeReason: "access token rejected")
        case .pong(let id):
            guard inFlight.removeValue(forKey: id) != nil else { return }
            if let pongTimer { loop.cancel(pongTimer) }
            pongTimer = nil
            schedulePing()
        case .result(let id, let result):
            guard let request = inFlight.removeValue(forKey: id) else { return }
            if let timer = request.timer { loop.cancel(timer) }
            request.finish(result)
        case .event(let id, let event):
            if id == entitySubscriptionID {
                if settings.entitySource == .stateChanged { stateChangedEvent(event) } else { entityEvent(event) }
            } else if let template = templateSubscriptionIDs[id] {
                guard let handlers = templateHandlers[template], let value = try? event.value(),
                      let rendering = TemplateRendering(event: value) else { return }
                for continuation in handlers.values { continuation.yield(rendering) }
            } else if let type = eventSubscriptionIDs[id] {
                guard let handlers = eventHandlers[type], !handlers.isEmpty, let value = try? event.value() else { return }
                for continuation in handlers.values { continuation.yield(value) }
            }
        case .other:
            break
        }
    }

    /// A `subscribe_entities` event: the first is the snapshot, the rest are diffs.
    private func entityEvent(_ event: JSONText) {
        if awaitingSnapshot {
            awaitingSnapshot = false
            do { snapshotArrived(try store.replace(withSnapshot: event)) } catch {
                // Cannot happen for a frame that parsed; if it does, a fresh connection brings a fresh snapshot.
                abortSocket(reason: "malformed entities snapshot: \(error)")
            }
        } else {
            do { changesArrived(try store.apply(event)) } catch {
                emit(.warning("ignored a malformed entities event: \(error)"))
            }
        }
    }

    private func snapshotArrived(_ snapshot: [EntityChange], knownIDs: [String]? = nil) {
        changesArrived(snapshot)
        phase = .ready
        wasReady = true
        resetBackOffWhenStable()
        emit(.ready(entities: store.count))
        findMissingEntities(knownIDs: knownIDs)
    }

    /// Whether the current socket reached ready: how it ends decides the back-off.
    private var wasReady = false

    /// Loop-confined copy of `sharedMissing`'s ids, checked as changes arrive.
    private var missingIDs: Set<String> = []

    /// After each snapshot: the entities asked for that Home Assistant does not have, one warning each, with a
    /// did-you-mean from Home Assistant's own ids. `subscribe_entities` gives only the entities asked for, so their
    /// ids are fetched (get_states) only when something is missing.
    private func findMissingEntities(knownIDs: [String]?) {
        let missing = (entityFilter?.entityIDs ?? []).filter { store[$0] == nil }
        guard !missing.isEmpty else { setMissing([]); return }
        if let knownIDs {
            setMissing(missing.map { MissingEntity(entityID: $0, suggestion: Suggestion.closest(to: $0, in: knownIDs)) })
            return
        }
        let expected = generation
        sendNow(["type": "get_states"]) { [self] result in
            guard generation == expected else { return }
            var known: [String] = []
            if case .success(.array(let states)) = result { known = states.compactMap { $0["entity_id"]?.stringValue } }
            let stillMissing = missing.filter { store[$0] == nil }
            setMissing(stillMissing.map { MissingEntity(entityID: $0, suggestion: Suggestion.closest(to: $0, in: known)) })
        }
    }

    private func setMissing(_ missing: [MissingEntity]) {
        missingIDs = Set(missing.map(\.entityID))
        sharedMissing.withLock { $0 = missing }
        for entity in missing { emit(.missingEntity(entity)) }
    }

    /// The back-off starts again from its first step once this connection has stayed up `stableAfter`; a link
    /// dropped sooner keeps counting.
    private func resetBackOffWhenStable() {
        addTimer(after: settings.reconnect.stableAfter) { [self] in attempt = 0 }
    }

    private func changesArrived(_ applied: [EntityChange]) {
        if !missingIDs.isEmpty {
            // An entity that appears after the snapshot (an integration loading late) is no longer missing.
            let arrived = applied.compactMap { change -> String? in
                if case .updated(let state) = change, missingIDs.contains(state.entityID) { state.entityID } else { nil }
            }
            if !arrived.isEmpty {
                missingIDs.subtract(arrived)
                sharedMissing.withLock { $0.removeAll { arrived.contains($0.entityID) } }
            }
        }
        receivedChanges.add(applied.count, ordering: .relaxed)
        arrivedChanges += applied
    }

    /// Hands what this pass took in to the consumer at once: the messages of one socket read are applied together
    /// before anything is evaluated, and the consumer is woken once for them.
    private func publishChanges() {
        guard !arrivedChanges.isEmpty else { return }
        changes.publish(arrivedChanges)
        arrivedChanges.removeAll(keepingCapacity: arrivedChanges.count <= EntityChangeFeed.keptCapacity)
    }

    private func emit(_ event: ConnectionEvent) {
        loop.preconditionInEventLoop()
        onEvent(event)
    }
}

extension HomeAssistantConnection: WebSocketConnectionDelegate {
    public func connectionDidOpen(_ connection: WebSocketConnection) {
        guard connection === socket else { return }
        cancelConnectionTimers()
        phase = .authenticating
        emit(.connected)
        let timeout = settings.authTimeout
        addTimer(after: timeout) { [self] in
            guard phase == .authenticating else { return }
            abortSocket(reason: "no auth_ok within \(ConnectionEvent.seconds(timeout))")
        }
    }

    public func connection(_ connection: WebSocketConnection, didReceive message: [UInt8]) {
        guard connection === socket else { return }
        let messages: [ServerMessage]
        do {
            messages = try ServerMessage.decode(frame: message)
        } catch {
            emit(.warning("ignored a malformed message from Home Assistant (\(message.count) bytes): \(error)"))
            return
        }
        for message in messages {
            handle(message)
            if socket !== connection { return }
        }
    }

    public func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason) {
        guard connection === socket else { return }
        socket = nil
        generation += 1
        cancelConnectionTimers()
        awaitingSnapshot = false
        entitySubscriptionID = nil
        eventSubscriptionIDs = [:]
        templateSubscriptionIDs = [:]
        let failed = inFlight.values
        inFlight = [:]
        for request in failed {
            if let timer = request.timer { loop.cancel(timer) }
            request.finish(.failure(.disconnected))
        }
        switch reason {
        case .messageTooLarge: emit(.warning("Home Assistant sent a \(reason); raise the message size limit if this repeats"))
        case .invalidUTF8: emit(.warning("Home Assistant sent \(reason); reconnecting"))
        default:
            // A link that was ready and then ended for an ordinary reason (a restart, a lost network) is dialled
            // again from the first step; one ended by what Home Assistant sent keeps counting (resetBackOffWhenStable).
            if wasReady { attempt = 0 }
        }
        wasReady = false
        emit(.disconnected(reason: closeReason ?? reason.description))
        closeReason = nil
        switch phase {
        case .stopped, .rejected:
            resumeStopWaiters()
        default:
            scheduleReconnect()
        }
    }
}
