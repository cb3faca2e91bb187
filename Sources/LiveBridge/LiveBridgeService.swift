public import Dispatcher
import FoundationEssentials
import Platform
import HTTPClient
import HomeAssistant
import JSON
import LiveActivity
public import Rules
import WebSocketTransport
import Templates

/// `livebridge run`: Home Assistant → rules → dispatcher, until cancelled.
///
/// Subscribes exactly the entities the rules read, re-evaluates only the activities that read a changed entity, and
/// hands the edges and changes to the dispatcher. `reload()` (SIGHUP) takes the rules again (a broken file keeps the
/// old ones); cancelling `run()` (SIGTERM) stops taking changes, sends what is due within a deadline, and closes
/// the socket.
public actor LiveBridgeService: Service {
    public struct Options: Sendable {
        public var configPath: String
        public var dataDirectory: String
        public var dryRun = false
        public var shutdownDeadline: Duration = .seconds(5)
        /// Where the status listener serves, over the rules file's `status.listen` (the add-on's ingress port).
        public var statusListen: RulesFile.StatusListener?
        /// Told each budget decision besides the status page's log (the demo's page shows them).
        public var onBudgetDecision: (@Sendable (Dispatcher.Decision) -> Void)?
        /// Waits for the start of the next minute, when templates reading the time are evaluated again; false when
        /// cancelled. The wall clock's by default; a test gives its own.
        public var nextMinute: @Sendable () async -> Bool = Options.wallClockMinute
        public init(configPath: String, dataDirectory: String) {
            self.configPath = configPath
            self.dataDirectory = dataDirectory
        }

        /// Sleeps until just past the wall clock's next whole minute.
        public static let wallClockMinute: @Sendable () async -> Bool = {
            let now = Date().timeIntervalSince1970
            let next = (now / 60).rounded(.down) * 60 + 60
            return (try? await Task.sleep(for: .milliseconds(Int64((next - now) * 1000) + 1))) != nil
        }
    }

    public struct StartupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `run()` ended because Home Assistant rejected the access token (after staying up, unhealthy, until cancelled).
    public struct TokenRejectedError: Error, CustomStringConvertible {
        public var description: String { "Home Assistant rejected the access token" }
    }

    let options: Options
    let logger: Logger
    private var engine: ActivityEngine
    private let dispatcher: Dispatcher
    /// The services' request allowances and quota stops, shared by every backend made in this service's life.
    private let pacers = PacerRegistry()
    /// Says why Home Assistant cannot be reached when connecting fails.
    private let diagnosis: ConnectFailureDiagnosis
    private let connection: HomeAssistantConnection
    /// The service, its dispatcher and every task of its run share the socket's thread (`EventLoopExecutor`).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { connection.executor.asUnownedSerialExecutor() }
    public let metrics = Metrics()
    /// The last pushes, for the status page.
    let pushLog = PushLog()
    private var statusLoop: WebSocketEventLoop?
    /// Held for the life of the service: a second daemon on the same data directory is refused.
    private let dataDirectoryLock: DataDirectoryLock

    public init(options: Options, logger: Logger) throws {
        self.options = options
        self.logger = logger
        logger.takeLibraryLogs()
        let rules: RulesFile
        switch RulesLoader.load(file: options.configPath) {
        case .failure(let errors):
            throw StartupError(description: errors.description)
        case .success(let loaded): rules = loaded
        }
        logger.maskInLibraryLines(Self.tokens(of: rules))
        guard let settings = rules.homeAssistant, rules.problemsForRun.isEmpty else {
            throw StartupError(description: ConfigErrors(rules.problemsForRun).description)
        }
        let stateFile: DeliveryStateFile
        do {
            stateFile = try DeliveryStateFile(directory: options.dataDirectory)
            dataDirectoryLock = try DataDirectoryLock(directory: options.dataDirectory)
        } catch {
            throw StartupError(description: "\(error)")
        }
        for warning in SecretFilePermissions.warnings(configPath: options.configPath) { logger.warning(warning) }
        let configuration = try Self.connectionConfiguration(settings)
        let metrics = self.metrics, pushLog = self.pushLog
        let diagnosis = ConnectFailureDiagnosis(endpoint: configuration.endpoint, url: settings.url) { logger.warning($0) }
        self.diagnosis = diagnosis
        // The engine reads the connection's store where it is (both run on the socket's thread): changes carry ids.
        let connection = try HomeAssistantConnection(configuration: configuration, lendsStates: true) { event in
            if case .reconnecting = event { metrics.reconnect() }
            if case .disconnected(let reason) = event { diagnosis.failed(reason) }
            if event.isError { logger.warning(event.description) } else { logger.info(event.description) }
        }
        self.connection = connection
        let backends = Self.makeBackends(Array(rules.backends.values), dryRun: options.dryRun, connection: connection, logger: logger,
                                         pacers: pacers)
        dispatcher = Dispatcher(backends: backends, stateFile: stateFile, eventBornLimit: rules.eventActivityLimit,
                                executor: connection.executor, sleeper: connection.executor.loop, onPush: { record in
            let outcome: String
            var permanent: DeliveryCode?
            var limitCode: DeliveryCode?
            switch record.report.outcome {
            case .delivered: outcome = "delivered"
            case .alreadyRunning: outcome = "already_running"
            case .retry: outcome = "retry"
            case .locked: outcome = "locked"
            case .rejected(let code):
                outcome = "rejected"
                if record.report.status == 401 || code.isPermanent { permanent = code }
                limitCode = code
            }
            let backend = DeliveryState.backend(ofTarget: record.target)
            metrics.push(backend: backend, target: record.target, outcome: outcome, seconds: record.duration.secondsValue, permanentFailure: permanent,
                         connectionsOpened: record.report.connectionsOpened, limitCode: limitCode)
            // The page's log says why a push was refused (a spent quota, a missing scope), not only that it was.
            let logged = limitCode.map { "\(outcome): \($0.explained)" } ?? outcome
            let status = record.report.status.map(String.init) ?? "-"
            pushLog.append(.init(at: Date().timeIntervalSince1970, activity: record.activity, backend: record.target,
                                 kind: record.kind.rawValue, outcome: logged, status: status))
            logger.info("push", ["activity": record.activity, "target": record.target, "kind": record.kind.rawValue,
                                 "status": status, "outcome": outcome,
                                 "code": record.report.code?.logged ?? "-"])
        }, log: { logger.warning($0) }, info: { logger.info($0) }, decision: { [onBudgetDecision = options.onBudgetDecision] decision in
            pushLog.append(.init(at: Date().timeIntervalSince1970, activity: decision.activity, backend: decision.target, kind: "budget",
                                 outcome: decision.what, status: "-"))
            // A hold is said where people look (the phone lags on purpose), once until it changes or the lane goes
            // quiet (a lane held before every push would double the log); the routine debounce stays at debug.
            if decision.what.hasPrefix("holding"), !decision.isRepeat {
                logger.info("budget", ["activity": decision.activity, "target": decision.target, "decision": decision.what])
            } else if logger.level <= .debug {
                // Its fields are built only when the line is written: a decision comes with nearly every push.
                logger.debug("budget", ["activity": decision.activity, "target": decision.target, "decision": decision.what])
            }
            onBudgetDecision?(decision)
        })
        engine = ActivityEngine(rules: rules, lender: Self.lender(connection))
        if let listen = options.statusListen ?? rules.status {
            var loopOptions = WebSocketEventLoop.Options()
            loopOptions.listen = (listen.host, listen.port)
            loopOptions.name = "status"
            // Plain HTTP on a local port for metrics scrapes and the preview page.
            loopOptions.usesTLS = false
            loopOptions.maximumConnections = 64
            // GETs only: no bodies, no WebSocket upgrades (no onAccept), idle sockets closed after 5 s. A client holds at
            // most 8 sockets and has 3 s to send a whole request; the last 8 sockets serve /healthz only, so a flood of
            // idle or dribbling connections never silences the watchdog's probe.
            loopOptions.maximumRequestBody = 0
            loopOptions.idleTimeout = .seconds(5)
            loopOptions.listenerLimits = ListenerLimits(perClient: 8, deadline: .seconds(3), reserve: 8, reservedPaths: ["/healthz"])
            do { statusLoop = try WebSocketEventLoop(options: loopOptions) } catch {
                throw StartupError(description: "status listener (\(options.statusListen != nil ? "--status-listen" : "status.listen")): \(error)")
            }
        }
    }

    static func connectionConfiguration(_ settings: RulesFile.HomeAssistantSettings) throws -> ConnectionConfiguration {
        var configuration = try ConnectionConfiguration(url: settings.url, token: settings.token, caFile: settings.caFile,
                                                        allowSelfSigned: settings.allowSelfSigned)
        configuration.startupPollInterval = .seconds(2)
        configuration.entitySource = settings.entitySource
        configuration.pingInterval = settings.pingInterval
        configuration.pongTimeout = settings.pongTimeout
        return configuration
    }

    /// Backends made now (a reload's), sharing the allowances of those made before.
    func backends(for declared: [RulesFile.Backend]) -> [any PushBackend] {
        Self.makeBackends(declared, dryRun: options.dryRun, connection: connection, logger: logger, pacers: pacers)
    }

    /// A push backend per declared backend; Home Assistant's goes through the connection's call_service. `pacers`: the
    /// service's, for its whole life — a backend a reload adds or changes shares the allowance (and a spent monthly
    /// quota) with those on its address or account.
    static func makeBackends(_ declared: [RulesFile.Backend], dryRun: Bool, connection: HomeAssistantConnection,
                             logger: Logger, pacers: PacerRegistry) -> [any PushBackend] {
        declared.sorted { $0.name < $1.name }.map { backend in
            if dryRun { return DryRunBackend(name: backend.name, logger: logger) }
            // HTTP on the socket's thread, where the dispatcher runs: a push wakes no other thread.
            return BackendFactory.make(backend, client: HTTPClient(on: connection.executor.loop), connection: connection, pacers: pacers)
        }
    }

    /// The dispatcher's debounced/deduplicated/retry counts.
    public func budgetCounters() async -> ActivityLane.Counters { await dispatcher.counters }

    /// Where the status listener is, when on.
    public var statusPort: Int? { statusLoop?.listenPort }

    private func serveStatus() {
        let connection = connection, metrics = metrics, dispatcher = dispatcher, pushLog = pushLog
        let routes = StatusRoutes(source: .init(
            connectionPhase: { connection.currentPhase },
            missingEntities: { connection.missingEntities },
            failingBackends: { metrics.failingBackends },
            limitedBackends: { metrics.limitedBackends },
            metricsText: {
                let counters = await dispatcher.counters
                let relays = await dispatcher.relayRemaining
                return metrics.text(debounced: counters.debounced, deduplicated: counters.deduplicated, retries: counters.retries,
                                    stateChanges: connection.receivedChangeCount,
                                    framesReadInPlace: connection.framesReadInPlaceCount, held: counters.held, renewals: counters.renewals,
                                    relayRemaining: relays,
                                    holds: counters.holds.byName)
            },
            lanes: { await dispatcher.lanes },
            pushLog: { pushLog.recent }))
        statusRoutes = routes
        let requests = statusRequests
        statusLoop?.onHTTPRequest = { request, respond in
            if !requests.add(StatusRequest(request: request, respond: respond)) { respond(HTTPServerResponse(status: 503)) }
        }
        statusLoop?.start()
    }

    /// A request to the status listener, answered by `run()`'s child that serves them.
    struct StatusRequest: Sendable {
        let request: HTTPServerRequest
        let respond: @Sendable (HTTPServerResponse) -> Void
    }

    /// The status listener's requests, answered until the listener shuts down — through the shutdown too (/healthz
    /// says "stopping" then), so its queue ends only when finished, not when the run is cancelled.
    private let statusRequests = WorkQueue<StatusRequest>()
    private var statusRoutes: StatusRoutes?

    /// Answers the status listener's requests, each as a child of its own, until the queue is finished.
    nonisolated private func answerStatusRequests(with routes: StatusRoutes) async {
        await withDiscardingTaskGroup { group in
            while let item = await statusRequests.next() {
                group.addTask { item.respond(await routes.respond(to: item.request)) }
            }
        }
    }

    /// Runs until its graceful shutdown (`GracefulShutdown`, the runner's SIGTERM): then what is due goes out within
    /// the deadline, and the socket closes. Cancelled, it stops at once (what is pending resumes from the state file).
    /// Throws `TokenRejectedError` if Home Assistant rejected the token (after staying up, unhealthy on /healthz, until
    /// stopped: exiting would let a supervisor restart it into the same rejection). Every task it starts is a child
    /// of this call.
    public func run() async throws {
        let rejected = await withTaskExecutorPreference(connection.executor) { await runOnTheSocketsThread() }
        if rejected { throw TokenRejectedError() }
    }

    /// `run()`, its children preferring the socket's thread too; true if the token was rejected.
    private func runOnTheSocketsThread() async -> Bool {
        await prepare()
        return await withDiscardingTaskGroup(returning: Bool.self) { outer in
            // The dispatcher's sends, renders and timers, and the connection they go out on, live until the shutdown
            // below has flushed what is due; the status listener is answered until then too.
            let dispatcher = dispatcher, connection = connection, reads = engine.rules.reads
            outer.addTask { await dispatcher.run() }
            outer.addTask { await connection.run(selection: reads) }
            // Off the socket's thread: /healthz is answered while the engine works there (a slow template).
            if let routes = statusRoutes {
                outer.addTask(executorPreference: globalConcurrentExecutor) { await self.answerStatusRequests(with: routes) }
            }
            let rejected = await followUntilShutdown()
            await shutdown()
            outer.cancelAll()
            return rejected
        }
    }

    /// Follows Home Assistant until the graceful shutdown is asked for (or the task is cancelled); true if Home
    /// Assistant rejected the token meanwhile.
    private func followUntilShutdown() async -> Bool {
        await withTaskGroup(of: Bool.self) { race in
            race.addTask { await self.follow() }
            race.addTask {
                await gracefulShutdown()
                return false
            }
            var rejected = await race.next() ?? false
            race.cancelAll()
            for await other in race { rejected = rejected || other }
            return rejected
        }
    }

    /// The followers and the changes, until cancelled; true if the token was rejected (the service then waits,
    /// doing nothing, to be stopped).
    private func follow() async -> Bool {
        await withDiscardingTaskGroup(returning: Bool.self) { group in
            startFollowers(in: &group)
            let rejected = await followChanges(in: &group)
            if rejected {
                logger.error("Home Assistant rejected the access token; nothing more is attempted. Create a new long-lived token, then restart LiveBridge.")
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
            group.cancelAll()
            return rejected
        }
    }

    /// The connection's store, lent to the engine for each evaluation.
    private static func lender(_ connection: HomeAssistantConnection) -> ActivityEngine.StateLender {
        ActivityEngine.StateLender { connection.lentStates }
    }

    /// Every token the rules hold: Home Assistant's and the backends'.
    static func tokens(of rules: RulesFile) -> [AccessToken] {
        [rules.homeAssistant?.token].compactMap { $0 } + rules.backends.values.compactMap(\.token)
    }

    /// What runs before the first change: the dispatcher resumes what was pending, the status listener starts.
    private func prepare() async {
        await dispatcher.setPayloadSource(EnginePayloads(service: self))
        await dispatcher.resume()
        let running = await dispatcher.runningActivities
        engine = ActivityEngine(rules: engine.rules, running: Set(running.map(\.activity)), lender: Self.lender(connection))
        if !running.isEmpty { logger.info("resuming activities on phones", ["activities": running.map(\.activity).joined(separator: ",")]) }
        let entities = engine.rules.entityIDs.sorted()
        logger.info("starting", ["activities": String(engine.rules.activities.count), "entities": String(entities.count),
                                 "dry_run": String(options.dryRun)])
        if let settings = engine.rules.homeAssistant, settings.throughSupervisor {
            logger.info("Home Assistant through the Supervisor, with the add-on's token ($\(SupervisorAccess.tokenVariable))",
                        ["url": settings.url])
        }
        guard !Task.isCancelled else { return }
        serveStatus()
        if let port = statusPort, let host = (options.statusListen ?? engine.rules.status)?.host {
            logger.info("status listener", ["url": "http://\(host):\(port)/healthz"])
        }
    }

    /// The children that follow Home Assistant beside its entities: the rules' blueprint events, swipes and other
    /// notifications to the phones, the templates it renders, the clock, and the status listener's requests.
    private func startFollowers(in group: inout DiscardingTaskGroup) {
        group.addTask { [diagnosis] in await diagnosis.run() }
        let events = connection.events(ofType: engine.rules.eventType)
        group.addTask { for await event in events { await self.blueprintEvent(event["data"] ?? .null) } }
        if LiveActivityDismissal.isFollowed(by: engine.rules) {
            let dismissals = connection.events(ofType: LiveActivityDismissal.eventType)
            group.addTask { for await event in dismissals { await self.swipedAway(event["data"] ?? .null) } }
            // Other notifications to the phones spend the same daily relay quota: counted as core reports each call.
            let notifications = connection.events(ofType: RelayedNotification.eventType)
            group.addTask { for await event in notifications { await self.notified(event) } }
        }
        followRenderings(engine.rules.templatesRenderedByHomeAssistant)
        group.addTask { await self.followRenderings() }
        group.addTask { await self.followTheClock() }
    }

    /// Takes the entities' changes until cancelled (what is not taken stays in the feed) or until Home Assistant
    /// rejects the token (true then, also when cancelled meanwhile).
    private func followChanges(in group: inout DiscardingTaskGroup) async -> Bool {
        while !Task.isCancelled, let batch = await connection.changes.next() {
            metrics.stateChanges(batch.count)
            let now = Date().timeIntervalSince1970
            let snapshots = connection.snapshotCount
            let isSnapshot = snapshots != freshStates.snapshotsTaken
            // The first snapshot: every activity, also those that read no entity.
            let all = !freshStates.statesKnown
            // Home Assistant's renderings that came before this snapshot was taken, applied under its grace.
            var renderedReaders: [String] = []
            if isSnapshot {
                // A (re)connection's states, perhaps from a Home Assistant still starting.
                if all { group.addTask { await self.checkPreconditions() } }
                let taken = freshStates.tookSnapshot(count: snapshots, connectionCount: connection.connectionSnapshotCount)
                if taken.beginsGrace { holdEnds(now: now, in: &group) }
                // The grace in force, the engine reads the new states (until now, those from before the snapshot:
                // whatever evaluated in between saw what it would have seen had it kept its own copy).
                connection.tookSnapshot()
                for (source, rendering) in taken.kept { renderedReaders += engine.apply(rendering, of: source) }
                engine.home = connection.coreConfiguration.flatMap(HomeLocation.init(configuration:))
            }
            var evaluation = engine.evaluation(taking: batch, all: all)
            while true {
                // In parts of 10 ms: slow templates let the socket be read in between (Home Assistant drops a client
                // that falls far behind), and what else waits on this thread runs.
                // The time of each part: what ran between parts (the minute's tick) may have used a newer one.
                let partNow = Date().timeIntervalSince1970
                await dispatch(engine.continueEvaluating(&evaluation, now: partNow, until: SliceDeadline(after: Self.evaluationSlice)))
                if evaluation.isFinished { break }
                await Task.yield()
            }
            if !all, !renderedReaders.isEmpty {
                await dispatch(engine.evaluate(ids: Array(Set(renderedReaders)).sorted(), now: Date().timeIntervalSince1970))
            }
            logNewlyHeld()
            // The engine's share of a snapshot's short-lived memory (the connection trims its own).
            if batch.count >= FreedMemory.largeBatch { FreedMemory.release() }
            // The code that read the rules and took the snapshot is not run again while following: unmapped.
            if isSnapshot { CodePages.release() }
        }
        return connection.currentPhase == .rejected
    }

    /// How long the engine evaluates before it lets other work in (the socket's reading, whatever waits).
    static let evaluationSlice: Duration = .milliseconds(10)

    /// What may be evaluated before the service has taken Home Assistant's current states.
    private var freshStates = FreshStatesGate()

    /// Which restart grace is the current one: a grace started again by a newer (re)connection ends at its own time.
    private var graceGeneration = 0

    /// Fresh states from a (re)connection: for the restart grace, an activity whose condition turns false is kept
    /// until the grace (`homeassistant.restart_grace`) is over.
    private func holdEnds(now: Double, in group: inout DiscardingTaskGroup) {
        guard let grace = engine.rules.homeAssistant?.restartGrace, grace > .zero else { return }
        engine.holdEnds(until: now + grace.secondsValue)
        graceGeneration += 1
        let generation = graceGeneration
        group.addTask {
            guard (try? await Task.sleep(for: grace)) != nil else { return }
            await self.releaseHeldEnds(generation)
        }
    }

    private func releaseHeldEnds(_ generation: Int) async {
        guard generation == graceGeneration else { return }
        let held = Set(engine.heldActivities).union(heldLogged)
        heldLogged = []
        // The grace's time has passed on the monotonic clock: released even if the wall clock was set back meanwhile.
        let result = engine.releaseHeldEnds(now: Date().timeIntervalSince1970, graceOver: true)
        let ended = Set(result.commands.filter { if case .end = $0.event { true } else { false } }.map(\.activity))
        logger.info("restart grace over", ["ended": held.filter(ended.contains).sorted().joined(separator: ","),
                                           "kept": held.filter { !ended.contains($0) }.sorted().joined(separator: ",")])
        await dispatch(result)
    }

    /// The activities said to be held, so each is said once per grace.
    private var heldLogged: Set<String> = []
    /// `engine.heldInsertions` when last looked at.
    private var heldInsertionsSeen = 0

    /// Says which activities a batch left held (their condition false while Home Assistant may be starting).
    private func logNewlyHeld() {
        guard engine.heldInsertions != heldInsertionsSeen else { return }
        heldInsertionsSeen = engine.heldInsertions
        let held = engine.heldActivities.filter { !heldLogged.contains($0) }
        guard !held.isEmpty else { return }
        heldLogged.formUnion(held)
        logger.info("held in the restart grace", ["activities": held.joined(separator: ",")])
    }

    /// An update the dispatcher is about to send: rendered now, from the newest states.
    fileprivate func payload(activity: String, target: String, kind: PushKind) -> BackendRequest? {
        let (request, problems) = engine.payload(activity: activity, target: target, kind: kind, now: Date().timeIntervalSince1970)
        for problem in problems { logger.warning(problem) }
        if request != nil { metrics.renders(1) }
        return request
    }

    /// An activity the dispatcher renews: its end and start, rendered now.
    fileprivate func renewal(activity: String, target: String) -> (end: BackendRequest, start: BackendRequest)? {
        let (pair, problems) = engine.renewal(activity: activity, target: target, now: Date().timeIntervalSince1970)
        for problem in problems { logger.warning(problem) }
        if pair != nil { metrics.renders(2) }
        return pair
    }

    /// At the start of each minute, as Home Assistant renders templates reading the time, the activities that read it
    /// are evaluated again (none reading it, the minute passes with nothing done).
    nonisolated private func followTheClock() async {
        while await options.nextMinute() { await minute() }
    }

    private func minute() async {
        // Before the first snapshot the engine has no states: only activities reading none (a restored one reading an
        // entity would be ended for nothing).
        guard engine.readsTime else { return }
        await dispatch(engine.tick(now: Date().timeIntervalSince1970, statesKnown: freshStates.statesKnown))
    }

    /// The templates only Home Assistant can render, newest set: `run()`'s child follows their renderings, `reload()`
    /// replaces the set.
    private let renderingSets = LatestValue<[String]>()

    /// Sets which templates Home Assistant renders for the rules.
    private func followRenderings(_ sources: [String]) {
        // The same set (a reload that changed none of them): nothing is let go and followed again.
        guard renderingSets.value != sources else { return }
        renderingSets.set(sources)
        freshStates.follow(only: Set(sources))
        if !sources.isEmpty { logger.info("templates rendered by Home Assistant", ["count": String(sources.count)]) }
    }

    /// Follows Home Assistant's renderings of the current set (every new result re-evaluates the activities using
    /// it), one child per template; a new set lets the old ones go. Until cancelled.
    nonisolated private func followRenderings() async {
        var seen = 0
        while let (sources, version) = await renderingSets.next(after: seen) {
            seen = version
            await withTaskGroup(of: Bool.self) { group in
                for source in sources {
                    let renderings = connection.renderings(of: source)
                    group.addTask {
                        for await rendering in renderings { await self.rendered(rendering, of: source) }
                        return false
                    }
                }
                // Returns when a newer set comes (or the run is cancelled): then these are let go.
                group.addTask { await self.renderingSets.waitForChange(after: version); return true }
                while let replaced = await group.next(), !replaced {}
                group.cancelAll()
            }
        }
    }

    private func rendered(_ rendering: TemplateRendering, of source: String) async {
        if case .failure(let message) = rendering { logger.warning("Home Assistant could not render a template", ["problem": message]) }
        // From a Home Assistant perhaps still starting, before its snapshot (and restart grace): kept until then.
        guard freshStates.admit(rendering, of: source, phase: connection.currentPhase, snapshotCount: connection.snapshotCount) else { return }
        let ids = engine.apply(rendering, of: source)
        await dispatch(engine.evaluate(ids: ids, now: Date().timeIntervalSince1970))
    }

    private func dispatch(_ result: (commands: [ActivityEngine.Command], problems: [String])) async {
        // Starts and ends are rendered at their edge; updates only when the dispatcher pulls them (`payload`).
        metrics.renders(result.commands.filter { if case .changed = $0.event { false } else { true } }.count)
        for problem in result.problems { logger.warning(problem) }
        if logger.level <= .debug {
            for command in result.commands {
                logger.debug("queued", ["activity": command.activity, "target": command.target, "event": command.event.name])
            }
        }
        // Most changes need nothing of the dispatcher (an update already waits for its budget): no hop then.
        if !result.commands.isEmpty { await dispatcher.submit(result.commands) }
    }

    /// Said once connected: each Home Assistant target whose service is missing or whose phone is not an iPhone.
    func checkPreconditions() async {
        guard LiveActivityDismissal.isFollowed(by: engine.rules), let services = try? await connection.getServices() else { return }
        let devices = (try? await connection.send(["type": "config/device_registry/list"])) ?? .array([])
        phoneServices = LiveActivityDismissal.services(devices: devices)
        for warning in LiveActivityPreconditions.warnings(engine.rules, services: services, devices: devices) {
            logger.warning("Live Activity target", ["problem": warning])
        }
    }

    /// A service call core reports: a notification to one of the phones, sent by someone else, is counted against
    /// that phone's relay quota.
    func notified(_ event: JSONValue) async {
        guard let device = RelayedNotification.countedDevice(event, ownTags: RelayedNotification.ownTags(in: engine.rules)) else { return }
        await dispatcher.countRelayedElsewhere(device: device, at: Date().timeIntervalSince1970)
    }

    /// The user swiped an activity away on a phone: nothing more goes to that target until the activity's next start.
    /// The phones' notify services by device id, as the device registry said at start-up (a swipe event names the id).
    private var phoneServices: [String: String] = [:]

    func swipedAway(_ data: JSONValue) async {
        for (activity, target) in LiveActivityDismissal.targets(in: engine.rules, event: data, services: phoneServices) {
            logger.info("swiped away on the phone; nothing more is sent there until its next start", ["activity": activity, "target": target])
            await dispatcher.dismissedByUser(activity: activity, target: target)
        }
    }

    private var blueprintEvents = BlueprintEvents()

    /// A blueprint's event (`event_type` on the bus): dispatched like a rule's payload, or its problems told.
    func blueprintEvent(_ data: JSONValue) async {
        let rules = engine.rules
        for action in blueprintEvents.take(data, rules: rules) {
            switch action {
            case .submit(let submission):
                logger.debug("queued", ["activity": submission.activity, "target": submission.target, "event": submission.event.name])
                if await !dispatcher.submit(submission), let refusal = blueprintEvents.refused(submission, rules: rules) {
                    await tell(refusal)
                }
            case .notify:
                await tell(action)
            }
        }
    }

    private var tellingLimit = TellingLimit()

    /// An event's problem: logged, and shown in Home Assistant as a persistent notification; at most ten a minute.
    private func tell(_ action: BlueprintEvents.Action) async {
        guard case .notify(let activity, let problem, let id, let title, let message) = action else { return }
        let (admitted, heldBack) = tellingLimit.admit(at: Date().timeIntervalSince1970)
        if heldBack > 0 {
            logger.warning("\(heldBack) more invalid \(engine.rules.eventType) events were not told (at most \(tellingLimit.perWindow) a minute)")
        }
        guard admitted else { return }
        logger.warning("invalid \(engine.rules.eventType) event", ["activity": activity, "problem": problem])
        _ = try? await connection.callService(domain: "persistent_notification", service: "create", data: [
            "notification_id": .string(id), "title": .string(title), "message": .string(message),
        ])
    }

    /// SIGHUP: loads the file again; on any error the old rules keep running and every error is logged.
    public func reload() async {
        switch RulesLoader.load(file: options.configPath) {
        case .failure(let errors):
            logger.error("reload failed; the previous rules keep running", ["errors": String(errors.errors.count)])
            for error in errors.errors { logger.error(error.description) }
        case .success(let rules):
            if let problem = rules.problemsForRun.first {
                logger.error("reload failed; the previous rules keep running")
                logger.error(problem.description)
                return
            }
            let old = engine.rules
            logger.maskInLibraryLines(Self.tokens(of: rules) + Self.tokens(of: old))
            // Home Assistant's settings first: a new URL or token reconnects before the new rules are evaluated.
            if let settings = rules.homeAssistant, settings != old.homeAssistant {
                do {
                    let configuration = try Self.connectionConfiguration(settings)
                    try connection.reconfigure(configuration)
                    logger.info("Home Assistant settings changed; reconnecting", ["url": configuration.displayURL])
                } catch {
                    logger.error("reload: Home Assistant settings not applied; the previous ones stay", ["reason": "\(error)"])
                }
            }
            // New or changed backends take over at their next push; removed ones stay for lanes still ending.
            let changed = rules.backends.values.filter { backend in !(old.backends[backend.name].map(backend.isSame) ?? false) }
            if !changed.isEmpty {
                await dispatcher.replaceBackends(backends(for: changed))
                logger.info("backends changed", ["backends": changed.map(\.name).sorted().joined(separator: ",")])
            }
            await dispatcher.setEventBornLimit(rules.eventActivityLimit)
            let result = engine.reload(rules, now: Date().timeIntervalSince1970, statesKnown: freshStates.statesKnown)
            let reads = rules.reads
            if reads != old.reads { connection.setSelection(reads) }
            followRenderings(rules.templatesRenderedByHomeAssistant)
            logger.info("reloaded", ["activities": String(rules.activities.count)])
            await dispatch(result)
        }
    }

    /// The graceful shutdown, once following has ended: what is due goes out within the deadline (while the
    /// dispatcher's run and the connection still live); then the status listener stops. Cancelled, nothing more is
    /// sent: the state is saved for the next start.
    private func shutdown() async {
        if Task.isCancelled {
            logger.info("stopping at once (cancelled): nothing more is sent")
        } else {
            logger.info("stopping: sending what is due", ["deadline": "\(options.shutdownDeadline)"])
        }
        let complete = await dispatcher.flush(deadline: options.shutdownDeadline)
        if !complete { logger.warning("stopping with pushes still pending; they resume from the state file next start") }
        statusRequests.finish()
        // The listener's thread ends before run() returns (shut down from another thread: a loop cannot wait for itself).
        if let statusLoop {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DetachedThread.start {
                    statusLoop.shutdown()
                    done.resume()
                }
            }
        }
    }
}

/// The dispatcher's way back to the engine: it renders an update when the update is due. Holds the service weakly
/// (the service owns the dispatcher).
private final class EnginePayloads: PayloadSource, @unchecked Sendable {
    private weak var service: LiveBridgeService?

    init(service: LiveBridgeService) { self.service = service }

    nonisolated(nonsending) func payload(activity: String, target: String, kind: PushKind) async -> BackendRequest? {
        await service?.payload(activity: activity, target: target, kind: kind)
    }

    nonisolated(nonsending) func renewal(activity: String, target: String) async -> (end: BackendRequest, start: BackendRequest)? {
        await service?.renewal(activity: activity, target: target)
    }
}
