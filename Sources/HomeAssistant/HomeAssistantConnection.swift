import FoundationEssentials
import Platform
public import JSON
import Synchronization
public import WebSocketTransport

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
    /// Runs actors and tasks on the socket's thread, after each read (`EventLoopExecutor`): the daemon's engine and
    /// dispatcher take the changes where they arrive.
    public let executor: EventLoopExecutor
    private let onEvent: @Sendable (ConnectionEvent) -> Void
    private let sharedPhase = Locked(ConnectionPhase.idle)
    private let receivedChanges = Atomic<Int>(0)
    private let receivedSnapshots = Atomic<Int>(0)
    private let receivedConnectionSnapshots = Atomic<Int>(0)
    /// A snapshot came in this pass: the consumer is told even if it changed nothing (`publishChanges`).
    private var snapshotToTell = false

    /// Snapshots taken so far (one per connection that reached ready), counted before the snapshot's changes are
    /// fed: a reader that sees a snapshot's batch sees the count that includes it.
    public var snapshotCount: Int { receivedSnapshots.load(ordering: .acquiring) }

    /// Of those, the snapshots that were a socket's first: a (re)connection, after which Home Assistant may be fresh
    /// from a restart. The others come from following another selection on the same socket (`setSelection`).
    public var connectionSnapshotCount: Int { receivedConnectionSnapshots.load(ordering: .acquiring) }

    /// Home Assistant's configuration (`get_config`) as last answered on a socket: its location and unit system are
    /// what `distance()` and `closest()` use. Set before that socket's snapshot is fed.
    public var coreConfiguration: JSONValue? { sharedCoreConfiguration.withLock { $0 } }
    private let sharedCoreConfiguration = Locked<JSONValue?>(nil)

    /// Entities asked for that Home Assistant did not have at the last snapshot (less those that appeared since).
    public var missingEntities: [MissingEntity] { sharedMissing.withLock { $0 } }
    private let sharedMissing = Locked<[MissingEntity]>([])

    /// Entity changes received from Home Assistant so far (before the feed coalesces them).
    public var receivedChangeCount: Int { receivedChanges.load(ordering: .relaxed) }
    private let framesInPlace = Atomic<Int>(0)
    /// Frames of entity changes applied where they arrived (`EntityDiffFrame`), not decoded whole.
    public var framesReadInPlaceCount: Int { framesInPlace.load(ordering: .relaxed) }

    // Everything below is confined to the loop thread.
    /// `configuration`, as the loop reads it on every message.
    private var settings: ConnectionConfiguration
    private var phase = ConnectionPhase.idle {
        didSet { let value = phase; sharedPhase.withLock { $0 = value } }
    }
    /// The socket and what belongs to it; nil between sockets.
    private var session: ConnectionSession?
    private var reconnection = Reconnection()
    /// The first request id of the next socket: ids never repeat.
    private var nextRequestID = 1
    /// Commands waiting for authentication, across sockets.
    private var queued: [RequestTable.Request] = []
    private var store = EntityStore()
    /// Changes taken in during this pass over the socket, handed to `changes` together when it ends.
    private var arrivedChanges: [EntityChange] = []
    /// What to keep (nil: nothing). The store keeps these instances of the ids rather than its own copies.
    private var entityFilter: EntitySelection? {
        didSet { store.share(entityFilter ?? .nothing) }
    }
    /// Consumers of events and of template renderings, by event type and by template; subscribed on every socket.
    private var eventHandlers: [String: [UUID: AsyncStream<JSONValue>.Continuation]] = [:]
    private var templateHandlers: [String: [UUID: AsyncStream<TemplateRendering>.Continuation]] = [:]
    /// Each followed template's latest rendering, for a reader that joins later.
    private var latestRenderings: [String: TemplateRendering] = [:]
    /// Loop-confined copy of `sharedMissing`'s ids, checked as changes arrive.
    private var missingIDs: Set<String> = []
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []

    /// `lendsStates`: changes go out without their states (`EntityChange.changed`; removals as they are) and the
    /// consumer reads the states where they are kept, on the loop's thread (`lentStates`): the store then stays each
    /// state's only holder and a diff changes it in place, without an allocation (`EntityStore.isLent`). The daemon's
    /// engine, on the socket's thread, reads so; a consumer on another thread (`livebridge watch`, tests) takes
    /// changes with their states (the default).
    public init(configuration: ConnectionConfiguration, lendsStates: Bool = false,
                onEvent: @escaping @Sendable (ConnectionEvent) -> Void = { _ in }) throws {
        store.isLent = lendsStates
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
        executor = EventLoopExecutor(loop: loop)
        loop.start()
        loop.perform { [self] in loop.afterEachPass { [weak self] in self?.publishChanges() } }
    }

    // MARK: Public API

    /// Where the connection stands now.
    public var currentPhase: ConnectionPhase { sharedPhase.withLock { $0 } }

    /// The entities kept and their ids in Home Assistant's order, where they are (no copy): until the consumer has
    /// taken a (re)connection's snapshot (`tookSnapshot`), those from before it. Read on the loop's thread, as the
    /// connection's executor runs its jobs (or, once the loop has ended, after it, when nothing changes them any
    /// more), and let go before the loop reads on: the next change to the store is otherwise made on a copy.
    public var lentStates: (states: [String: EntityState], order: [String]) {
        loop.preconditionInEventLoopOrEnded()
        return store.lent
    }

    /// The consumer of a lending connection has taken the snapshots so far (and begun its restart grace):
    /// `lentStates` is the store as it is from now on. On the loop's thread, as `lentStates`.
    public func tookSnapshot() {
        loop.preconditionInEventLoopOrEnded()
        store.tookSnapshot()
    }

    /// Starts connecting. `entityIDs` are the entities to keep (nil: none, only events and commands).
    /// Connects (keeping the entities `selection` names; nil: none, only events and commands). Called by `run`.
    private func start(selection: EntitySelection?) {
        loop.perform { [self] in
            guard phase == .idle else { return }
            entityFilter = selection
            connect()
        }
    }

    /// Why new settings cannot be taken without a restart.
    public struct NeedsRestartError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// New settings (a rotated token, another URL): the socket is dropped and dialled again with them at once.
    /// What the event loop was made with cannot change in place: plain ws:// against wss://, the CA file, the
    /// message size cap.
    public func reconfigure(_ new: ConnectionConfiguration) throws(NeedsRestartError) {
        let old = configuration
        let usesTLS = { (c: ConnectionConfiguration) -> Bool in if case .tls = c.endpoint.security { true } else { false } }
        let caFile = { (c: ConnectionConfiguration) -> String? in if case .tls(let file, _) = c.endpoint.security { file } else { nil } }
        guard usesTLS(new) == usesTLS(old), caFile(new) == caFile(old), new.maximumMessageSize == old.maximumMessageSize else {
            throw NeedsRestartError(description: "a change between ws:// and wss://, of ca_file or of the message size takes a restart")
        }
        guard currentPhase != .rejected else {
            throw NeedsRestartError(description: "Home Assistant rejected the old token and the connection has stopped; restart to use the new one")
        }
        sharedConfiguration.withLock { $0 = new }
        loop.perform { [self] in
            settings = new
            reconnection.startOver()
            switch phase {
            case .stopped, .rejected, .idle: return
            case .disconnected:
                if let timer = reconnection.timer { loop.cancel(timer) }
                reconnection.timer = nil
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
            guard phase == .ready || phase == .subscribing, let session else { return }
            if let id = session.followingID {
                send(["type": "unsubscribe_events", "subscription": .int(id)], on: session) { _ in }
            }
            followEntities(on: session)
        }
    }

    /// Events of one type (`state_changed`, a custom event…), subscribed now and after every reconnect.
    /// A consumer more than 4096 events behind loses the oldest.
    public func events(ofType type: String) -> AsyncStream<JSONValue> {
        stream(of: type, in: \.eventHandlers, bufferingNewest: 4096) { connection, session in connection.subscribeEvents(type, on: session) }
    }

    /// Home Assistant's renderings of a template (`render_template`): the first at once, then a new one whenever
    /// what the template reads changes; subscribed now and after every reconnect. Only the newest is kept for a
    /// consumer that is behind.
    public func renderings(of template: String) -> AsyncStream<TemplateRendering> {
        stream(of: template, in: \.templateHandlers, bufferingNewest: 1, latest: { $0.latestRenderings[template] }) { connection, session in
            connection.subscribeTemplate(template, on: session)
        }
    }

    /// A stream fed by the subscription `subject` names in `handlers`: the first consumer of a subject subscribes it
    /// (now if authenticated; `authenticated` subscribes every subject again after a reconnect). A stopped
    /// connection gives a finished stream.
    private func stream<Value: Sendable>(of subject: String,
                                         in handlers: ReferenceWritableKeyPath<HomeAssistantConnection, [String: [UUID: AsyncStream<Value>.Continuation]]>,
                                         bufferingNewest limit: Int,
                                         latest: @escaping @Sendable (HomeAssistantConnection) -> Value? = { _ in nil },
                                         subscribe: @escaping @Sendable (HomeAssistantConnection, ConnectionSession) -> Void) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(limit))
        let key = UUID()
        nonisolated(unsafe) let handlers = handlers
        let accepted = loop.perform { [self] in
            let isNew = self[keyPath: handlers][subject] == nil
            self[keyPath: handlers][subject, default: [:]][key] = continuation
            if isNew, isAuthenticated, let session { subscribe(self, session) }
            // Joining a subscription already answered: its latest answer first (core may never send another).
            if !isNew, let value = latest(self) { continuation.yield(value) }
        }
        guard accepted else { continuation.finish(); return stream }
        let loop = self.loop
        continuation.onTermination = { [weak self] _ in
            loop.perform { [weak self] in
                guard let self else { return }
                self[keyPath: handlers][subject]?[key] = nil
                // The last consumer gone: the subscription ends with it, so the next consumer subscribes afresh and
                // gets Home Assistant's first answer again (a template read twice, `render --url` after `check`).
                if self[keyPath: handlers][subject]?.isEmpty == true {
                    self[keyPath: handlers][subject] = nil
                    self.unsubscribe(subject, template: handlers == \HomeAssistantConnection.templateHandlers)
                }
            }
        }
        return stream
    }

    /// Sends a command (without `id`) and returns its result, awaited where the caller runs (nonsending: a push from the
    /// dispatcher does not step off its executor and back). Waits for the connection if it is down;
    /// fails with `timeout` after `requestTimeout`, `disconnected` if the link drops before the result, `cancelled`
    /// at once when the waiting task is cancelled (a service stopping does not wait out a silent Home Assistant).
    nonisolated(nonsending) public func send(_ command: [String: JSONValue]) async throws -> JSONValue {
        let pending = PendingRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, Error>) in
                let accepted = loop.perform { [self] in
                    let request = RequestTable.Request(command: command) { continuation.resume(with: $0.mapError { $0 as any Error }) }
                    // Both run on the loop, in order: a cancel that came first finishes it as soon as it is made.
                    pending.request = request
                    if pending.isCancelled { return request.finish(.failure(.cancelled)) }
                    enqueue(request)
                }
                if !accepted { continuation.resume(throwing: HomeAssistantError.stopped) }
            }
        } onCancel: {
            loop.perform { [self] in
                pending.isCancelled = true
                guard let request = pending.request else { return }
                request.finish(.failure(.cancelled))
                if let timer = request.timer { loop.cancel(timer) }
                queued.removeAll { $0 === request }
            }
        }
    }

    /// A request being sent, as its cancellation sees it. Touched on the loop's thread only.
    private final class PendingRequest: @unchecked Sendable {
        var request: RequestTable.Request?
        var isCancelled = false
    }

    /// `call_service`: `domain.service` with data and an optional target.
    nonisolated(nonsending) public func callService(domain: String, service: String, data: [String: JSONValue] = [:],
                            target: [String: JSONValue]? = nil) async throws -> JSONValue {
        var command: [String: JSONValue] = ["type": "call_service", "domain": .string(domain), "service": .string(service)]
        if !data.isEmpty { command["service_data"] = .object(data) }
        if let target { command["target"] = .object(target) }
        return try await send(command)
    }

    /// `get_config`: Home Assistant's configuration, including its `state` (RUNNING, STARTING…).
    nonisolated(nonsending) public func getConfig() async throws -> JSONValue {
        try await send(["type": "get_config"])
    }

    /// `get_services`: every service by domain (`{"notify": {"mobile_app_phone": {…}}}`).
    nonisolated(nonsending) public func getServices() async throws -> JSONValue {
        try await send(["type": "get_services"])
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

    /// The connection as a child of its owner's task: connects (keeping the entities `selection` names), holds the
    /// link through reconnects until the task is cancelled, then closes it. Cancellation is what ends it; a connection
    /// runs once. Cancelled before it began, it connects not at all and only stops the loop.
    public func run(selection: EntitySelection?) async {
        if !Task.isCancelled {
            start(selection: selection)
            // A stream that never yields: its iteration ends when the task is cancelled.
            let (cancelled, keptOpen) = AsyncStream.makeStream(of: Never.self)
            for await _ in cancelled {}
            withExtendedLifetime(keptOpen) {}
        }
        await close()
    }

    /// `body` with the connection running beside it (for commands only, no entities followed unless `selection`
    /// names some): a one-shot command's connection, closed when `body` returns or throws.
    public func running<T: Sendable>(selection: EntitySelection? = nil,
                                     _ body: @Sendable (HomeAssistantConnection) async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            // Connecting begins now, on the loop's thread, not when the child gets a thread of the pool: the body's
            // requests are timed from a connection under way (`run`'s own start is then a no-op).
            start(selection: selection)
            group.addTask { await self.run(selection: selection) }
            let result = try await body(self)
            group.cancelAll()
            return result
        }
    }

    /// Closes the socket (waiting up to 2 s for Home Assistant's close) and stops the loop. Pending requests fail
    /// with `stopped`.
    private func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let accepted = loop.perform { [self] in
                guard phase != .stopped else { continuation.resume(); return }
                let wasOpen = session != nil
                enterFinalPhase(.stopped, failure: .stopped, closeReason: "LiveBridge is stopping")
                emit(.stopped)
                if wasOpen {
                    closeWaiters.append(continuation)
                    loop.schedule(after: .seconds(2)) { [self] in resumeCloseWaiters() }
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
        phase = .connecting
        emit(.connecting(url: settings.displayURL, attempt: reconnection.attempt))
        let session = ConnectionSession(socket: loop.connect(to: settings.endpoint, delegate: self),
                                        heartbeat: Heartbeat(interval: settings.pingInterval, timeout: settings.pongTimeout),
                                        firstRequestID: nextRequestID)
        self.session = session
        let timeout = settings.handshakeTimeout
        addTimer(after: timeout, on: session) { [self] in
            guard phase == .connecting else { return }
            abortSocket(reason: "no WebSocket handshake within \(ConnectionEvent.seconds(timeout))")
        }
    }

    /// Runs `work` after `delay` if `session` is still the current one; cancelled with the session's timers. One that
    /// went off leaves the session's list: a ping's timer, one an interval, would otherwise pile up there for as long
    /// as the socket lives.
    private func addTimer(after delay: Duration, on session: ConnectionSession, _ work: @escaping () -> Void) {
        var scheduled: WebSocketEventLoop.TimerToken?
        // The session is held, not weakly: a weak reference would move its reference count to a side table, which
        // makes every retain of it on the message path take the slow way (retain and release were 13–15 % of a flood's
        // CPU samples with this side table, HostedTransfers' and a retain of the connection per message; 7.5 % without).
        let token = loop.schedule(after: delay) { [self, session] in
            if let scheduled { session.timers.removeAll { $0 == scheduled } }
            guard self.session === session else { return }
            work()
        }
        scheduled = token
        session.timers.append(token)
    }

    /// How many timers the current socket holds (nil: no socket). For tests.
    package func socketTimerCount() async -> Int? {
        await withCheckedContinuation { continuation in
            let accepted = loop.perform { [self] in continuation.resume(returning: session?.timers.count) }
            if !accepted { continuation.resume(returning: nil) }
        }
    }

    private func abortSocket(reason: String) {
        guard let session else { return }
        session.closeReason = session.closeReason ?? reason
        session.socket.abort(reason: reason)
    }

    /// The socket's timers and its heartbeat's.
    private func cancelSocketTimers(_ session: ConnectionSession) {
        session.cancelTimers(on: loop)
        if let pong = session.heartbeat.stop() { loop.cancel(pong) }
    }

    private func scheduleReconnect() {
        loop.preconditionInEventLoop()
        let delay = reconnection.nextDelay(settings.reconnect, random: Double.random(in: 0..<1))
        phase = .disconnected
        emit(.reconnecting(after: delay))
        reconnection.timer = loop.schedule(after: delay) { [self] in
            reconnection.timer = nil
            guard phase == .disconnected else { return }
            connect()
        }
    }

    /// Rejected or stopped: nothing more will be attempted.
    private func enterFinalPhase(_ final: ConnectionPhase, failure: HomeAssistantError, closeReason reason: String) {
        phase = final
        if let timer = reconnection.timer { loop.cancel(timer) }
        reconnection.timer = nil
        failAll(with: failure)
        if let session {
            cancelSocketTimers(session)
            session.closeReason = session.closeReason ?? reason
            session.socket.close(reason: reason)
        }
        publishChanges()
        changes.finish()
        for handlers in eventHandlers.values { for continuation in handlers.values { continuation.finish() } }
        eventHandlers = [:]
        for handlers in templateHandlers.values { for continuation in handlers.values { continuation.finish() } }
        templateHandlers = [:]
        latestRenderings = [:]
    }

    private func resumeCloseWaiters() {
        let waiters = closeWaiters
        closeWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Requests

    /// A public command: written now if authenticated, otherwise kept until the next socket is; fails after
    /// `requestTimeout` either way.
    private func enqueue(_ request: RequestTable.Request) {
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
        if isAuthenticated, let session { write(request, on: session) } else { queued.append(request) }
    }

    private func flushQueued(on session: ConnectionSession) {
        let waiting = queued.filter { !$0.isDone }
        queued = []
        for request in waiting { write(request, on: session) }
    }

    /// Numbers the request and writes its frame: on one thread, so ids go out strictly increasing.
    @discardableResult
    private func write(_ request: RequestTable.Request, on session: ConnectionSession) -> Int {
        let (id, frame) = session.requests.add(request)
        session.socket.send(frame)
        return id
    }

    /// One of LiveBridge's own commands on `session`; its completion runs once, also when the socket ends first.
    @discardableResult
    private func send(_ command: [String: JSONValue], on session: ConnectionSession,
                      completion: @escaping (Result<JSONValue, HomeAssistantError>) -> Void) -> Int {
        write(RequestTable.Request(command: command, completion: completion), on: session)
    }

    private func failAll(with error: HomeAssistantError) {
        let requests = (session?.requests.takeAll() ?? []) + queued
        queued = []
        for request in requests {
            if let timer = request.timer { loop.cancel(timer) }
            request.finish(.failure(error))
        }
    }

    // MARK: After authentication

    private func authenticated(version: String?, on session: ConnectionSession) {
        cancelSocketTimers(session)
        phase = .waitingForStartup
        emit(.authenticated(haVersion: version))
        send(["type": "supported_features", "features": ["coalesce_messages": 1]], on: session) { _ in }
        schedulePing(on: session)
        for type in eventHandlers.keys.sorted() { subscribeEvents(type, on: session) }
        for template in templateHandlers.keys.sorted() { subscribeTemplate(template, on: session) }
        flushQueued(on: session)
        checkCoreState(on: session)
    }

    /// The snapshot is trusted only once Home Assistant says RUNNING: before that, integrations are still
    /// loading and entities would seem to vanish.
    private func checkCoreState(on session: ConnectionSession) {
        send(["type": "get_config"], on: session) { [self] result in
            guard self.session === session, phase == .waitingForStartup else { return }
            if case .object(let answer)? = try? result.get() {
                // Only what templates use is kept: the location and the length unit (never tokens or URLs).
                var kept: [String: JSONValue] = [:]
                for key in ["latitude", "longitude"] { if case .double? = answer[key] { kept[key] = answer[key] } else if case .int? = answer[key] { kept[key] = answer[key] } }
                if case .string(let length)? = answer["unit_system"]?["length"], length.utf8.count <= 8 { kept["unit_system"] = .object(["length": .string(length)]) }
                sharedCoreConfiguration.withLock { $0 = .object(kept) }
            }
            let state = (try? result.get())?["state"]?.stringValue ?? "RUNNING"
            if state == "RUNNING" {
                followEntities(on: session)
                return
            }
            if !session.reportedStartupWait {
                session.reportedStartupWait = true
                emit(.waitingForStartup(coreState: state))
            }
            addTimer(after: settings.startupPollInterval, on: session) { [self] in checkCoreState(on: session) }
        }
    }

    /// Starts following the watched entities the way `entity_source` says; ready at once if none are watched.
    private func followEntities(on session: ConnectionSession) {
        guard let filter = entityFilter else {
            becameReady(on: session)
            emit(.ready(entities: 0))
            return
        }
        phase = .subscribing
        let following: any EntityFollowing = settings.entitySource == .stateChanged
            ? StateChangedFollowing(filter) : EntitySubscription(filter)
        session.following = following
        // Registered before the command goes out: the result and the snapshot can arrive in one frame.
        session.followingID = send(following.subscription, on: session) { [self] result in
            guard self.session === session, case .failure(let error) = result else { return }
            emit(.warning("\(following.refusal.warning): \(error)"))
            abortSocket(reason: following.refusal.closeReason)
        }
        if let command = following.snapshotCommand {
            send(command, on: session) { [self] result in
                guard self.session === session, session.following === following else { return }
                took(following.takeSnapshot(result, into: &store), on: session)
            }
        }
    }

    /// What an event or snapshot of the entity subscription did.
    private func took(_ outcome: EntityFollowingOutcome, on session: ConnectionSession) {
        switch outcome {
        case .changes(let changes): changesArrived(changes)
        case .snapshot(let changes, let knownIDs, let warnings):
            for warning in warnings { emit(.warning(warning)) }
            snapshotArrived(changes, knownIDs: knownIDs, on: session)
        case .nothing: break
        case .skipped(let warning): emit(.warning(warning))
        case .unusable(let reason, let warning):
            if let warning { emit(.warning(warning)) }
            abortSocket(reason: reason)
        }
    }

    /// Ends this socket's subscriptions for `subject` (a template or an event type nobody reads any more).
    private func unsubscribe(_ subject: String, template: Bool) {
        guard let session else { return }
        let ids = template ? session.templateSubscriptions.filter { $0.value == subject }.map(\.key)
                           : session.eventSubscriptions.filter { $0.value == subject }.map(\.key)
        if template { latestRenderings[subject] = nil }
        for id in ids {
            if template { session.templateSubscriptions[id] = nil } else { session.eventSubscriptions[id] = nil }
            send(["type": "unsubscribe_events", "subscription": .int(id)], on: session) { _ in }
        }
    }

    private func subscribeEvents(_ type: String, on session: ConnectionSession) {
        let id = send(["type": "subscribe_events", "event_type": .string(type)], on: session) { [self] result in
            if case .failure(let error) = result {
                emit(.warning("subscribe_events \(type) failed: \(error)"
                    + (error.code == .unauthorized ? " (custom events need an administrator's token)" : "")))
            }
        }
        session.eventSubscriptions[id] = type
    }

    private func subscribeTemplate(_ template: String, on session: ConnectionSession) {
        let id = send(["type": "render_template", "template": .string(template), "report_errors": true], on: session) { [self] result in
            guard case .failure(let error) = result, error != .disconnected, error != .stopped else { return }
            let refusal = TemplateRendering(refusal: error).redacting(settings.token)
            for continuation in (templateHandlers[template] ?? [:]).values { continuation.yield(refusal) }
        }
        session.templateSubscriptions[id] = template
    }

    // MARK: Heartbeat

    private func schedulePing(on session: ConnectionSession) {
        addTimer(after: session.heartbeat.interval, on: session) { [self] in
            let id = send(["type": "ping"], on: session) { _ in }
            awaitPong(id, on: session, for: session.heartbeat.timeout, looksLeft: Heartbeat.secondLooks)
        }
    }

    /// Gives up on the link when the pong has not come `wait` from now. A deadline met late was passed while the loop
    /// was busy (`Heartbeat.late`): it gets another look once the socket has been read, as the pong may wait in it.
    private func awaitPong(_ id: Int, on session: ConnectionSession, for wait: Duration, looksLeft: Int) {
        let due = ContinuousClock.now.advanced(by: wait)
        let timer = loop.schedule(after: wait) { [self, session] in
            guard self.session === session, session.heartbeat.isAwaiting(id) else { return }
            if looksLeft > 0, ContinuousClock.now - due > Heartbeat.late {
                awaitPong(id, on: session, for: Heartbeat.secondLook, looksLeft: looksLeft - 1)
                return
            }
            abortSocket(reason: "no pong within \(ConnectionEvent.seconds(session.heartbeat.timeout))")
        }
        session.heartbeat.sent(ping: id, timer: timer)
    }

    private func pongArrived(id: Int, on session: ConnectionSession) {
        guard session.requests.take(id: id) != nil else { return }
        if let timer = session.heartbeat.pong(id: id) { loop.cancel(timer) }
        schedulePing(on: session)
    }

    // MARK: Incoming

    private func handle(_ message: ServerMessage, on session: ConnectionSession) {
        loop.preconditionInEventLoop()
        switch message {
        case .authRequired:
            let auth: JSONValue = ["type": "auth", "access_token": .string(settings.token.secret)]
            session.socket.send(auth.jsonText)
        case .authOK(let version):
            authenticated(version: version, on: session)
        case .authInvalid(let message):
            emit(.rejected(message: message))
            enterFinalPhase(.rejected, failure: .rejected, closeReason: "access token rejected")
        case .pong(let id):
            pongArrived(id: id, on: session)
        case .result(let id, let result):
            guard let request = session.requests.take(id: id) else { return }
            if let timer = request.timer { loop.cancel(timer) }
            // An error's message is Home Assistant's text, which callers print: the token masked in it.
            if case .failure(let error) = result {
                let token = settings.token
                request.finish(.failure(HomeAssistantError(code: .init(rawValue: token.masking(in: error.code.rawValue)),
                                                           message: token.masking(in: error.message))))
            } else {
                request.finish(result)
            }
        case .event(let id, let event):
            if id == session.followingID, let following = session.following {
                took(following.take(event, into: &store), on: session)
            } else if let template = session.templateSubscriptions[id] {
                // Read from its text: a dict in the result keeps the order Home Assistant wrote its keys in.
                guard let handlers = templateHandlers[template], let read = try? TemplateRendering(event: event) else { return }
                let rendering = read.redacting(settings.token)
                latestRenderings[template] = rendering
                for continuation in handlers.values { continuation.yield(rendering) }
            } else if let type = session.eventSubscriptions[id] {
                guard let handlers = eventHandlers[type], !handlers.isEmpty, let value = try? event.value() else { return }
                for continuation in handlers.values { continuation.yield(value) }
            }
        case .other:
            break
        }
    }

    private func snapshotArrived(_ snapshot: [EntityChange], knownIDs: [String]?, on session: ConnectionSession) {
        if !session.reachedReady { receivedConnectionSnapshots.add(1, ordering: .releasing) }
        receivedSnapshots.add(1, ordering: .releasing)
        changesArrived(snapshot)
        // The lending consumer (the daemon's service) counts snapshots: one that changed nothing still begins its
        // restart grace and lets it read the states as they are.
        if store.isLent { snapshotToTell = true }
        becameReady(on: session)
        emit(.ready(entities: store.count))
        findMissingEntities(knownIDs: knownIDs, on: session)
    }

    private func becameReady(on session: ConnectionSession) {
        phase = .ready
        session.reachedReady = true
        // The back-off starts again from its first step once this socket has stayed up `stableAfter`; a link
        // dropped sooner keeps counting.
        addTimer(after: settings.reconnect.stableAfter, on: session) { [self] in reconnection.startOver() }
    }

    /// After each snapshot: the entities asked for that Home Assistant does not have, one warning each, with a
    /// did-you-mean from Home Assistant's own ids. `subscribe_entities` gives only the entities asked for, so their
    /// ids are fetched (get_states) only when something is missing.
    private func findMissingEntities(knownIDs: [String]?, on session: ConnectionSession) {
        let missing = (entityFilter?.entityIDs ?? []).filter { store[$0] == nil }
        guard !missing.isEmpty else { setMissing([]); return }
        if let knownIDs {
            setMissing(missing.map { MissingEntity(entityID: $0, suggestion: Suggestion.closest(to: $0, in: knownIDs)) })
            return
        }
        send(["type": "get_states"], on: session) { [self] result in
            guard self.session === session else { return }
            var known: [String] = []
            if case .success(.array(let states)) = result { known = states.compactMap { $0["entity_id"]?.stringValue } }
            let stillMissing = missing.filter { store[$0] == nil }
            setMissing(stillMissing.map { MissingEntity(entityID: $0, suggestion: Suggestion.closest(to: $0, in: known)) })
        }
    }

    private func setMissing(_ missing: [MissingEntity]) {
        missingIDs = Set(missing.map(\.entityID))
        // /healthz shows these: masked as the events are.
        let shown = missing.map { $0.redacting(settings.token) }
        sharedMissing.withLock { $0 = shown }
        for entity in missing { emit(.missingEntity(entity)) }
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
        if store.isLent {
            arrivedChanges.append(contentsOf: applied.lazy.map(\.withoutState))
        } else {
            arrivedChanges += applied
        }
    }

    /// Hands what this pass took in to the consumer at once: the messages of one socket read are applied together
    /// before anything is evaluated, and the consumer is woken once for them.
    private func publishChanges() {
        defer { snapshotToTell = false }
        guard !arrivedChanges.isEmpty else {
            if snapshotToTell { changes.wake() }
            return
        }
        changes.publish(arrivedChanges)
        arrivedChanges.removeAll(keepingCapacity: arrivedChanges.count <= EntityChangeFeed.keptCapacity)
    }

    /// Reports an event, the access token taken out of its text: a server may quote it back (in an answer to the
    /// upgrade, an error, an auth_invalid message) and what the connection reports is logged.
    private func emit(_ event: ConnectionEvent) {
        loop.preconditionInEventLoop()
        onEvent(event.redacting(settings.token.secret))
    }
}

extension HomeAssistantConnection: WebSocketConnectionDelegate {
    public func connectionDidOpen(_ connection: WebSocketConnection) {
        guard let session, connection === session.socket else { return }
        cancelSocketTimers(session)
        // Stopped while it connected: the close asked for already goes out; nothing starts on this socket.
        guard phase == .connecting else { return }
        phase = .authenticating
        emit(.connected)
        let timeout = settings.authTimeout
        addTimer(after: timeout, on: session) { [self] in
            guard phase == .authenticating else { return }
            abortSocket(reason: "no auth_ok within \(ConnectionEvent.seconds(timeout))")
        }
    }

    /// The commonest frame, entity changes on the subscription (`EntityDiffFrame`), is applied from the socket's
    /// buffer; any other is left to be copied and decoded (`didReceive`). In a coalesced array, the other messages
    /// (a `render_template` event that came in the same tick) are decoded one by one and handled in their place.
    public func connection(_ connection: WebSocketConnection, takeInPlace message: UnsafeBufferPointer<UInt8>, isText: Bool) -> Bool {
        guard isText, let session, connection === session.socket, let id = session.followingID,
              let following = session.following,
              let parts = following.readInPlace(message, subscriptionID: id, into: &store) else { return false }
        let taken = apply(parts, of: message, subscriptionID: id, on: session)
        store.endFrame(parts)
        return taken
    }

    /// A frame read in place, its parts applied and handled in order; false, with nothing done, when one of its
    /// other messages does not decode.
    private func apply(_ parts: [EntityStore.FramePart], of message: UnsafeBufferPointer<UInt8>, subscriptionID id: Int,
                       on session: ConnectionSession) -> Bool {
        // Taken only whole, as the general path takes a frame: every other message decodes before anything is applied.
        var others: [ServerMessage] = []
        for part in parts {
            guard case .other(let range) = part else { continue }
            guard let decoded = try? ServerMessage.decode(message: UnsafeBufferPointer(rebasing: message[range])) else { return false }
            others.append(decoded)
        }
        var applied = 0
        var nextOther = 0
        // Set once another message may have changed the store or the subscription (a result's callback, an event of
        // the subscription itself): the diffs after it are then handled from their bytes the general way, as if
        // the frame had been decoded whole.
        var generally = false
        for part in parts {
            switch part {
            case .diff(let position, let range):
                if generally {
                    handleAlone(message, range, on: session)
                } else {
                    // Straight into this pass's changes, without `changesArrived`'s look for entities no longer
                    // missing: a diff applies only to an entity already in the store, and a missing one never is
                    // (entities enter the store by a snapshot or an `a`, both read the general way).
                    arrivedChanges.append(store.applyFrameDiff(position))
                    applied += 1
                }
            case .notKept(let range):
                if generally { handleAlone(message, range, on: session) }
            case .other:
                let other = others[nextOther]
                nextOther += 1
                handle(other, on: session)
                if !other.leavesEntitiesAsTheyAre(subscriptionID: id) { generally = true }
            }
            if self.session !== session { break }
        }
        receivedChanges.add(applied, ordering: .relaxed)
        // Counted when a diff was applied where it arrived (not when a result first sent them all the general way).
        if applied > 0 { framesInPlace.add(1, ordering: .relaxed) }
        return true
    }

    /// One message of a frame read in place, decoded and handled as the general path does.
    private func handleAlone(_ frame: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, on session: ConnectionSession) {
        guard self.session === session,
              let decoded = try? ServerMessage.decode(message: UnsafeBufferPointer(rebasing: frame[range])) else { return }
        handle(decoded, on: session)
    }

    public func connection(_ connection: WebSocketConnection, didReceive message: [UInt8]) {
        guard let session, connection === session.socket else { return }
        let messages: [ServerMessage]
        do {
            messages = try ServerMessage.decode(frame: message)
        } catch {
            emit(.warning("ignored a malformed message from Home Assistant (\(message.count) bytes): \(error)"))
            return
        }
        for message in messages {
            handle(message, on: session)
            if self.session !== session { return }
        }
    }

    public func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason) {
        guard let session, connection === session.socket else { return }
        self.session = nil
        nextRequestID = session.requests.nextID
        cancelSocketTimers(session)
        for request in session.requests.takeAll() {
            if let timer = request.timer { loop.cancel(timer) }
            request.finish(.failure(.disconnected))
        }
        switch reason {
        case .messageTooLarge(let size, let limit):
            // `run` has no knob for the limit: 64 MiB is far beyond the snapshot of the entities any rules read.
            emit(.warning("Home Assistant sent a message of at least \(size) bytes, over the \(limit)-byte limit; the link is dropped "
                          + "and made again (`livebridge watch --max-message-size` shows what it holds)"))
        case .invalidUTF8: emit(.warning("Home Assistant sent \(reason); reconnecting"))
        case .protocolViolation: emit(.warning("Home Assistant broke the WebSocket protocol (\(reason)); reconnecting"))
        default: break
        }
        if Reconnection.startsOver(after: reason, reachedReady: session.reachedReady) { reconnection.startOver() }
        emit(.disconnected(reason: session.closeReason ?? reason.description))
        switch phase {
        case .stopped, .rejected:
            resumeCloseWaiters()
        default:
            scheduleReconnect()
        }
    }
}
