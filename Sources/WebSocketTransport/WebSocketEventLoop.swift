import CLibWebSockets
import Dispatch
import FoundationEssentials
import Platform
import Synchronization

/// One libwebsockets context and the thread that services it.
///
/// libwebsockets is single-threaded: only this loop's thread calls into it. Other threads hand it
/// work with `perform`, which queues the closure and wakes the loop with `lws_cancel_service`.
/// Timers run on the same thread, so code driven by this loop needs no locks of its own.
public final class WebSocketEventLoop: @unchecked Sendable {
    public struct Options: Sendable {
        /// Listen on this address and port (0: any free port); nil for a client-only loop.
        public var listen: (host: String, port: Int)?
        /// A PEM file of the certificate authorities a client trusts instead of the system store.
        public var clientCAFile: String?
        /// Server TLS certificate and key (PEM), when the listener serves wss://.
        public var serverCertificate: (certificate: String, key: String)?
        /// Largest message accepted before the connection is dropped.
        public var maximumMessageSize: Int = 64 << 20
        /// Largest fragment written at once.
        public var fragmentSize: Int = 256 << 10
        public var name: String = "websocket"
        /// Whether this loop speaks TLS (wss:// out, or a listener with a certificate). Without it OpenSSL is never
        /// initialised for the loop and no certificate store is loaded: ~1 MiB of heap and libcrypto's pages spared.
        public var usesTLS: Bool = true
        /// At most this many sockets at once; nil sizes libwebsockets' lookup table by the process's file limit,
        /// 8 bytes per possible descriptor (4 MiB under systemd's 524,288). Beyond the limit, connections are refused.
        public var maximumConnections: Int?
        /// The largest request body a listener takes (a larger one is answered 413 and the connection closed);
        /// 0 refuses bodies altogether, as a status page that only answers GETs should.
        public var maximumRequestBody: Int = 1 << 20
        /// A listener's connection that sends no complete request (headers dribbled in, a kept-alive socket left
        /// idle) is closed after this long: idle sockets must not pile up and starve the ones that ask something.
        public var idleTimeout: Duration = .seconds(10)
        /// A listener's bounds per client, its deadline for a whole request and its reserve (with `maximumConnections`).
        public var listenerLimits: ListenerLimits?

        public init() {}
    }

    public let options: Options
    /// The port the listener is bound to; 0 for a client-only loop.
    public let listenPort: Int

    /// Called on the loop thread for every connection a listener accepts. Set before `start()`.
    public var onAccept: (@Sendable (WebSocketConnection) -> Void)? {
        willSet { precondition(!hasStarted, "\(options.name): set onAccept before start()") }
    }
    /// Serves plain HTTP requests to the listener (WebSocket upgrades go to `onAccept`); nil answers 404.
    /// Set before `start()`.
    public var onHTTPRequest: HTTPHandler? {
        willSet { precondition(!hasStarted, "\(options.name): set onHTTPRequest before start()") }
    }
    var httpExchanges: [OpaquePointer: HTTPExchange] = [:]
    /// Who is connected to the listener, under `options.listenerLimits`.
    private var listenerGuard: ListenerGuard?

    /// Destroyed by the loop thread when it stops, or by `deinit` for a loop never started. Other threads reach it
    /// only through `perform`, under `queue`'s lock and only while the loop runs.
    let context: OpaquePointer
    private let queue = Locked(WorkQueue())
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// The loop thread's id (pthread_t), 0 before it starts: what `preconditionInEventLoop` compares with.
    private let loopThread = Atomic<UInt>(0)
    private var hasStarted: Bool { queue.withLock { $0.phase != .created } }

    /// Work handed over by other threads, and whether the loop still takes it.
    private struct WorkQueue {
        enum Phase { case created, running, stopped }
        var phase = Phase.created
        var work: [@Sendable () -> Void] = []
        /// Swift concurrency's jobs for an `EventLoopExecutor` of this loop.
        var jobs: [ExecutorJobEntry] = []
    }

    /// A job and the executor it runs on.
    struct ExecutorJobEntry: @unchecked Sendable {
        let job: UnownedJob
        let executor: EventLoopExecutor
    }
    /// Jobs to run after the current pass over the sockets, outside libwebsockets' callbacks. Confined to the loop.
    private var readyJobs: [ExecutorJobEntry] = []
    /// `readyJobs`' other list, empty, with its room (`runReadyJobs`).
    private var spareJobs: [ExecutorJobEntry] = []
    /// Set on the loop thread once the loop takes no more jobs: later ones run on `EventLoopExecutor`'s own queue.
    var jobsMoved = false

    // Strings and tables libwebsockets keeps pointers to, alive until the context is destroyed.
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []

    // Confined to the loop thread.
    private let timer: UnsafeMutablePointer<clws_timer>
    /// The timers' timerfd, polled with the sockets; libwebsockets' own timer (`timer`) only if it cannot be made.
    /// libwebsockets 4.1 waits in whole milliseconds, truncated: its timer's last fraction of a millisecond is spent
    /// polling without waiting, over and over (113,000 polls in a 4 s flood when the dispatcher's timer went there).
    var timerDescriptor = TimerDescriptor()
    private var timers: [ScheduledTimer] = []
    private var nextTimerID = 0
    private(set) var contextDestroyed = false
    /// Run on the loop thread after each pass over the sockets (`afterEachPass`).
    private var passEnd: [() -> Void] = []
    var connections: [ObjectIdentifier: WebSocketConnection] = [:]
    /// Descriptors of other libraries polled with the sockets (`watch`).
    var watchSet = WatchSet()
    /// Tasks sleeping on the loop's timers (`sleep(until:)`), ended when the loop stops.
    var sleeps: [ObjectIdentifier: LoopSleep] = [:]

    /// Creates the context and binds the listener, if any; nothing is serviced until `start()`.
    /// Throws when the context cannot be made: a listener's port already in use says so, with host and port.
    public init(options: Options) throws {
        // Room for no connection (a reviewer crashed libwebsockets with it), or for more than a process can have
        // descriptors (libwebsockets sizes a table by it), is a mistake: said at once.
        if let maximum = options.maximumConnections, !(1...(1 << 20)).contains(maximum) {
            throw TransportError("a loop allowed \(maximum) connections: it needs room for 1 to 1,048,576")
        }
        self.options = options
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        let timer = UnsafeMutablePointer<clws_timer>.allocate(capacity: 1)
        timer.initialize(to: clws_timer())
        LibWebSocketsLog.install()
        var strings: [UnsafeMutablePointer<CChar>] = []
        func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
            let copy = strdup(string)!
            strings.append(copy)
            return copy
        }
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(keep("livebridge"))
        protocols[0].callback = webSocketCallback
        protocols[0].rx_buffer_size = 64 << 10
        protocols[1] = lws_protocols()

        var info = lws_context_creation_info()
        info.protocols = UnsafePointer(protocols)
        // UTF-8 of text messages is checked by WebSocketConnection, which can then say why it closed.
        info.options = 0
        // What one read of a socket takes in (libwebsockets' default is 4 KiB): a burst of Home Assistant's messages
        // arrives in a few reads, not one per 4 KiB.
        info.pt_serv_buf_size = 64 << 10
        if options.usesTLS || options.serverCertificate != nil { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        // A few descriptors beyond the connections: the cancel pipe and the listener.
        if let maximum = options.maximumConnections { info.fd_limit_per_thread = UInt32(maximum + 4) }
        info.gid = -1
        info.uid = -1
        // Requests: headers bounded, and every socket holding some (a header table each) timed out when idle.
        let idleSeconds = UInt32(max(1, options.idleTimeout.components.seconds))
        info.timeout_secs = idleSeconds
        info.timeout_secs_ah_idle = idleSeconds
        info.keepalive_timeout = Int32(idleSeconds)
        info.max_http_header_data = 4096
        if let maximum = options.maximumConnections { info.max_http_header_pool = UInt16(clamping: maximum) }
        if let listen = options.listen {
            info.port = Int32(listen.port)
            info.iface = UnsafePointer(keep(listen.host))
            // libwebsockets (4.1) opens an IPv6 socket for a listener when it can and then binds an IPv4 address given
            // as the interface to every address (*:port): an IPv4 host is bound on an IPv4 socket, so 127.0.0.1 is
            // loopback only.
            if listen.host.contains("."), !listen.host.contains(":") { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
            // Without it libwebsockets makes its context with no listener when it cannot bind (a host name such as
            // `localhost`, which it reads as an interface's name; a port below 1024; an address not this machine's),
            // and the daemon ran without the listener it logged.
            info.options |= UInt64(LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND)
            if let certificate = options.serverCertificate {
                info.ssl_cert_filepath = UnsafePointer(keep(certificate.certificate))
                info.ssl_private_key_filepath = UnsafePointer(keep(certificate.key))
            }
        } else {
            info.port = CONTEXT_PORT_NO_LISTEN
        }
        // The given CA file, else the system's bundle wherever this distribution keeps it (a TLS client only).
        if let caFile = options.clientCAFile ?? (options.usesTLS && options.listen == nil ? SystemCertificates.bundle : nil) {
            info.client_ssl_ca_filepath = UnsafePointer(keep(caFile))
        }
        // The loop finds itself from libwebsockets' callbacks through a box filled in below: `self` cannot be
        // handed out before every stored property is set.
        let owner = OwnerBox()
        info.user = Unmanaged.passUnretained(owner).toOpaque()
        guard let context = lws_create_context(&info) else {
            // Nothing else holds these yet: released here, once (deinit does not run for a throwing init that
            // had not set every property).
            Self.release(protocols: protocols, timer: timer, strings: strings)
            throw TransportError(options.listen.map { ListenProbe.problem(host: $0.host, port: $0.port) }
                                 ?? "libwebsockets could not create its context")
        }
        var port = 0
        if options.listen != nil, let vhost = lws_get_vhost_by_name(context, "default") {
            port = Int(lws_get_vhost_listen_port(vhost))
        }
        self.protocols = protocols
        self.timer = timer
        self.cStrings = strings
        self.context = context
        self.listenPort = port
        self.owner = owner
        if let limits = options.listenerLimits, options.listen != nil {
            listenerGuard = ListenerGuard(limits: limits, capacity: options.maximumConnections ?? Int.max)
        }
        owner.loop = self
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Where libwebsockets' context user pointer leads: the loop, set once before the loop thread starts.
    final class OwnerBox: @unchecked Sendable {
        unowned(unsafe) var loop: WebSocketEventLoop?
    }
    private let owner: OwnerBox

    /// Starts servicing on the loop's own thread; handlers must be set before. The thread holds the loop until
    /// shutdown: a loop lives as long as it runs. Calling it again does nothing.
    public func start() {
        let first = queue.withLock { queue -> Bool in
            guard queue.phase == .created else { return false }
            queue.phase = .running
            return true
        }
        guard first else { return }
        DetachedThread.start(name: options.name, stackSize: 8 << 20) { self.run() }
    }

    deinit {
        // A loop that ran destroyed its context on its thread; one never started still holds it.
        // Its callbacks, on this thread, must not reach a loop being torn down.
        if !contextDestroyed {
            owner.loop = nil
            lws_context_destroy(context)
        }
        Self.release(protocols: protocols, timer: timer, strings: cStrings)
    }

    private static func release(protocols: UnsafeMutablePointer<lws_protocols>, timer: UnsafeMutablePointer<clws_timer>,
                                strings: [UnsafeMutablePointer<CChar>]) {
        protocols.deallocate()
        timer.deallocate()
        for s in strings { free(s) }
    }

    /// Runs `work` on the loop thread, soon. Safe from any thread. Work handed over before `shutdown()` runs, even
    /// while the loop stops; after it, `perform` refuses at once and returns false, so a caller waiting on the work
    /// can fail instead of waiting forever.
    @discardableResult
    public func perform(_ work: @escaping @Sendable () -> Void) -> Bool {
        queue.withLock { queue -> Bool in
            guard queue.phase != .stopped else { return false }
            queue.work.append(work)
            // Under the lock: the loop thread marks the queue stopped under it before it destroys the context.
            if queue.phase == .running { lws_cancel_service(context) }
            return true
        }
    }

    /// Whether the caller is on this loop's thread.
    public var isInEventLoop: Bool {
        let thread = loopThread.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(pthread_t(thread), pthread_self()) != 0
    }

    /// Traps in debug builds when called off the loop thread: what is confined to the loop says so, checked.
    @inlinable
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isInEventLoop, "\(options.name): must run on its event loop's thread", file: file, line: line)
    }

    /// `preconditionInEventLoop`, or the loop has ended: what it confined then changes no more, and the thread its
    /// executor's jobs run on after it (`EventLoopExecutor`) may read it.
    public func preconditionInEventLoopOrEnded(file: StaticString = #fileID, line: UInt = #line) {
        assert(isInEventLoop || queue.withLock { $0.phase == .stopped }, "\(options.name): must run on its event loop's thread",
               file: file, line: line)
    }

    /// Runs `body` on the loop thread after each pass over the sockets, once whatever one read brought in has been
    /// handled: so the messages of one read can be handed on together. Call on the loop thread.
    public func afterEachPass(_ body: @escaping () -> Void) {
        preconditionInEventLoop()
        passEnd.append(body)
    }

    /// Stops the loop: work already handed over runs, every connection is dropped and the context destroyed.
    /// Blocks until done. Must not be called from the loop thread.
    public func shutdown() {
        precondition(!isInEventLoop, "\(options.name): shutdown() would wait for its own thread")
        start()  // a loop never started still has a context to destroy on its thread
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else {
            finished.wait()
            finished.signal()
            return
        }
        queue.withLock { queue in if queue.phase == .running { lws_cancel_service(context) } }
        finished.wait()
        // Let every other caller of shutdown() through too.
        finished.signal()
    }

    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        runPending()
        while !stopRequested.load(ordering: .acquiring) {
            // Jobs left over after their time slice: the sockets are looked at without waiting, then the jobs go on.
            if !runReadyJobs(for: Self.jobSlice) { lws_cancel_service(context) }
            let serviced = lws_service(context, 0)
            runDueTimers()
            // Also after the last pass: what it brought in is handed on before the loop stops.
            for body in passEnd { body() }
            if serviced < 0 { break }
        }
        // What was handed over before runs while connections still exist, and what that hands over in turn; once
        // nothing is left, no new work is taken (jobs go to their executor's own queue from then on).
        repeat { runReadyJobs(for: nil) } while runPending(stoppingWhenNone: true)
        jobsMoved = true
        // Sleeps on the loop's timers finish theirs on Swift's (their jobs run on the executor's own queue now).
        for sleep in sleeps.values { _ = sleep.finish(.success(false)) }
        sleeps = [:]
        lws_sul_cancel(&timer.pointee.sul)
        timerDescriptor.disarm()
        // Set first: connections closing during the destroy may schedule timers, which must not reach the context.
        contextDestroyed = true
        lws_context_destroy(context)
        timerDescriptor.end()
        for connection in connections.values { connection.contextDestroyed() }
        connections = [:]
        httpExchanges = [:]
        timers = []
        // The thread is about to end, and a later thread may get its id: none of them is this loop's.
        loopThread.store(0, ordering: .releasing)
        finished.signal()
    }

    /// Drains work queued by other threads (LWS_CALLBACK_EVENT_WAIT_CANCELLED); their jobs wait for the pass's end.
    /// `stoppingWhenNone`: with nothing queued, the loop stops taking work, under the same lock. Whether any was.
    @discardableResult
    func runPending(stoppingWhenNone: Bool = false) -> Bool {
        preconditionInEventLoop()
        let (work, jobs) = queue.withLock { queue -> ([@Sendable () -> Void], [ExecutorJobEntry]) in
            if stoppingWhenNone, queue.work.isEmpty, queue.jobs.isEmpty { queue.phase = .stopped }
            defer { queue.work = []; queue.jobs = [] }
            return (queue.work, queue.jobs)
        }
        readyJobs.append(contentsOf: jobs)
        for item in work { item() }
        return !work.isEmpty || !jobs.isEmpty
    }

    /// A connection ended, and what its end set in motion must not wait for the next event: libwebsockets ends a
    /// connection still connecting from its own timers, which it runs before it waits on the sockets, so a job the
    /// end queued would wait with the pass (30 s, its next timer, when nothing else comes). Ends are rare: a wake
    /// each costs nothing worth counting. (A timer set there sets the loop's timer, which the poll sees.)
    func connectionEnded() {
        preconditionInEventLoop()
        if !readyJobs.isEmpty, !contextDestroyed { lws_cancel_service(context) }
    }

    /// Takes a job of `executor`: on the loop thread it waits for the end of the pass; from another thread it is
    /// queued and the loop woken; once the loop has stopped it runs on the executor's own queue.
    func enqueue(_ job: UnownedJob, on executor: EventLoopExecutor) {
        let entry = ExecutorJobEntry(job: job, executor: executor)
        if isInEventLoop, !jobsMoved {
            readyJobs.append(entry)
            return
        }
        let queued = queue.withLock { queue -> Bool in
            guard queue.phase != .stopped else { return false }
            queue.jobs.append(entry)
            if queue.phase == .running { lws_cancel_service(context) }
            return true
        }
        if !queued { executor.runAfterTheLoop(job) }
    }

    /// How long jobs run before the loop looks at its sockets again: a run of jobs (renders of slow templates, a
    /// snapshot's evaluation in parts) must not leave Home Assistant's messages unread for long, or it drops the client.
    static let jobSlice: Duration = .milliseconds(20)

    /// Runs the jobs taken so far, and those they enqueue in turn, until none is left or `slice` has passed (nil: no
    /// limit); true when none is left. A job is never cut short: one slow job still holds the loop while it runs.
    /// The two lists trade places and keep their room: a flood's pass would otherwise grow one anew each time.
    @discardableResult
    private func runReadyJobs(for slice: Duration?) -> Bool {
        let deadline = slice.map(SliceDeadline.init(after:))
        var ranOne = false
        while !readyJobs.isEmpty {
            var jobs = spareJobs
            spareJobs = []
            swap(&jobs, &readyJobs)
            defer {
                jobs.removeAll(keepingCapacity: jobs.capacity <= Self.keptJobRoom)
                spareJobs = jobs
            }
            for index in jobs.indices {
                // Before every job but the first: one may render a template for its whole 2 s bound.
                if ranOne, let deadline, deadline.isPast {
                    readyJobs.insert(contentsOf: jobs[index...], at: 0)
                    return false
                }
                jobs[index].executor.run(jobs[index].job)
                ranOne = true
            }
        }
        return true
    }

    /// Room for jobs kept between passes; a snapshot's thousands are handed back.
    private static let keptJobRoom = 1024

    // MARK: Listener limits

    /// A socket accepted at the network level: false closes it at once (its address has its share open).
    func admit(socket: Int32) -> Bool {
        preconditionInEventLoop()
        guard listenerGuard != nil else { return true }
        var name = [CChar](repeating: 0, count: 64)
        let peer = lws_get_peer_simple_fd(socket, &name, name.count).map { String(cString: $0) } ?? "unknown"
        let (admitted, evict) = listenerGuard!.admit(socket: socket, peer: peer)
        if let evict { lws_set_timeout(evict, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
        return admitted
    }

    /// The connection of an admitted socket: under the deadline from now.
    func connectionSeen(wsi: OpaquePointer) {
        preconditionInEventLoop()
        guard listenerGuard != nil, let (client, evict) = listenerGuard!.connected(wsi, socket: lws_get_socket_fd(wsi)) else { return }
        if let evict { lws_set_timeout(evict, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
        closeIfOverdue(wsi, client)
    }

    /// After the deadline, a socket still without its whole request is closed.
    private func closeIfOverdue(_ wsi: OpaquePointer, _ client: ListenerGuard.Client) {
        guard let deadline = listenerGuard?.limits.deadline else { return }
        schedule(after: deadline) { [weak self] in
            guard let self, self.listenerGuard?.overdue(wsi, as: client) == true else { return }
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
    }

    func connectionGone(wsi: OpaquePointer) {
        preconditionInEventLoop()
        listenerGuard?.closed(wsi)
    }

    // MARK: HTTP

    func httpBegan(wsi: OpaquePointer, uri: String) {
        preconditionInEventLoop()
        let exchange = HTTPExchange.begin(wsi: wsi, uri: uri)
        httpExchanges[wsi] = exchange
        if listenerGuard?.requested(wsi, path: String(uri.prefix { $0 != "?" })) == false {
            refuse(exchange, wsi: wsi, status: 503, "busy: the last connections are kept for the health check")
            return
        }
        let length = Int(exchange.headers["content-length"] ?? "0") ?? -1
        let chunked = exchange.headers["transfer-encoding"].map { !$0.isEmpty } ?? false
        if length < 0 || length > options.maximumRequestBody || (chunked && options.maximumRequestBody == 0) {
            refuse(exchange, wsi: wsi, status: 413,
                   options.maximumRequestBody == 0 ? "this listener takes no request bodies" : "the request body is over \(options.maximumRequestBody) bytes")
            return
        }
        if length == 0 && !chunked { httpBodyComplete(wsi: wsi) }
    }

    /// Answers at once and closes the connection after the answer. `reason` is our own text: no quotes to escape.
    private func refuse(_ exchange: HTTPExchange, wsi: OpaquePointer, status: Int, _ reason: String) {
        exchange.response = HTTPServerResponse(status: status, json: #"{"error":""# + reason + #""}"#)
        exchange.closeAfterResponse = true
        lws_callback_on_writable(wsi)
    }

    /// Returns false when the connection must be dropped (a chunked body past the cap).
    func httpBody(wsi: OpaquePointer, _ chunk: UnsafeRawBufferPointer) -> Bool {
        preconditionInEventLoop()
        guard let exchange = httpExchanges[wsi], exchange.response == nil else { return true }
        guard exchange.body.count + chunk.count <= options.maximumRequestBody else { return false }
        exchange.body.append(contentsOf: chunk)
        return true
    }

    /// The last request's serial (`HTTPExchange.serial`).
    private var lastExchangeSerial = 0

    func httpBodyComplete(wsi: OpaquePointer) {
        preconditionInEventLoop()
        guard let exchange = httpExchanges[wsi] else { return }
        guard let handler = onHTTPRequest else {
            exchange.response = HTTPServerResponse(status: 404, json: #"{"error":"not found"}"#)
            lws_callback_on_writable(wsi)
            return
        }
        let wsiAddress = UInt(bitPattern: wsi)
        lastExchangeSerial += 1
        exchange.serial = lastExchangeSerial
        let serial = exchange.serial
        handler(exchange.request) { [weak self] response in
            self?.perform { [weak self] in
                // The exchange may be gone (client hung up); then the answer is dropped. Found by its serial: a new
                // connection, another client's, may stand at the gone one's address by now.
                guard let self, let wsi = OpaquePointer(bitPattern: wsiAddress), let exchange = self.httpExchanges[wsi],
                      exchange.serial == serial, exchange.response == nil else { return }
                exchange.response = response
                lws_callback_on_writable(wsi)
            }
        }
    }

    func httpWriteable(wsi: OpaquePointer) -> Bool {
        preconditionInEventLoop()
        guard let exchange = httpExchanges[wsi] else { return true }
        let keep = exchange.writeable(wsi: wsi)
        if exchange.headersSent, exchange.response != nil, !keep || exchange.isFinished {
            httpExchanges[wsi] = nil
            // Kept alive: the next request is under the deadline again.
            if keep, let client = listenerGuard?.answered(wsi) { closeIfOverdue(wsi, client) }
        }
        return keep
    }

    func httpClosed(wsi: OpaquePointer) {
        preconditionInEventLoop()
        httpExchanges[wsi] = nil
    }

    // MARK: Client connections

    /// Opens a client connection; its delegate hears of the outcome on the loop thread.
    /// Call on the loop thread.
    public func connect(to endpoint: WebSocketEndpoint, delegate: any WebSocketConnectionDelegate) -> WebSocketConnection {
        preconditionInEventLoop()
        let connection = WebSocketConnection(loop: self, maximumMessageSize: options.maximumMessageSize,
                                             fragmentSize: options.fragmentSize)
        connection.delegate = delegate
        connections[ObjectIdentifier(connection)] = connection
        connection.open(endpoint: endpoint, context: context)
        return connection
    }

    /// Whether a listener takes WebSocket upgrades: only when something handles them.
    var acceptsWebSockets: Bool { onAccept != nil }

    func accepted(wsi: OpaquePointer) -> WebSocketConnection {
        preconditionInEventLoop()
        let connection = WebSocketConnection(loop: self, maximumMessageSize: options.maximumMessageSize,
                                             fragmentSize: options.fragmentSize)
        connection.attach(wsi: wsi)
        connections[ObjectIdentifier(connection)] = connection
        onAccept?(connection)
        return connection
    }

    func forget(_ connection: WebSocketConnection) {
        preconditionInEventLoop()
        connections[ObjectIdentifier(connection)] = nil
    }

    // MARK: Timers

    private struct ScheduledTimer {
        let id: Int
        let deadline: ContinuousClock.Instant
        /// The deadline and its tolerance: the loop wakes for it by then at the latest.
        let latest: ContinuousClock.Instant
        let work: () -> Void
    }
    /// When the loop's timer is set to wake it; nil when it is not.
    private var armedAt: ContinuousClock.Instant?

    /// A timer that can be cancelled.
    public struct TimerToken: Sendable, Hashable { let id: Int }

    /// Runs `work` on the loop thread after `delay`. Call on the loop thread.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> TimerToken {
        schedule(at: .now + delay, work)
    }

    /// Runs `work` on the loop thread at `deadline`, or up to `tolerance` later: a timer with a tolerance runs with the
    /// first pass after its deadline, whatever woke the loop, and the loop wakes for it only when nothing else has by
    /// `deadline + tolerance` (under a flood of messages such timers cost no wake of their own). Call on the loop thread.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, tolerance: Duration = .zero, _ work: @escaping () -> Void) -> TimerToken {
        preconditionInEventLoop()
        nextTimerID += 1
        let entry = ScheduledTimer(id: nextTimerID, deadline: deadline, latest: deadline.advanced(by: max(.zero, tolerance)), work: work)
        let index = timers.firstIndex { $0.deadline > entry.deadline } ?? timers.count
        timers.insert(entry, at: index)
        if armedAt.map({ entry.latest < $0 }) ?? true { armTimer() }
        return TimerToken(id: entry.id)
    }

    /// Cancels a timer that has not fired yet. Call on the loop thread.
    public func cancel(_ token: TimerToken) {
        preconditionInEventLoop()
        timers.removeAll { $0.id == token.id }
    }

    /// Sets the loop's timer for the earliest `latest` of the timers.
    private func armTimer() {
        guard !contextDestroyed, var at = timers.first?.latest else { armedAt = nil; return }
        for timer in timers.dropFirst() where timer.latest < at { at = timer.latest }
        armedAt = at
        // Made at the first timer: a loop that never sets one (most of a test run's hundreds) spends no descriptor.
        timerDescriptor.openOnce(context: context)
        let delay = ContinuousClock.now.duration(to: at)
        if timerDescriptor.arm(after: delay) { return }
        let microseconds = max(0, delay.wholeMicroseconds)
        lws_sul_schedule(context, 0, &timer.pointee.sul, timerCallback, lws_usec_t(microseconds))
    }

    /// The loop's timer went off.
    func timerFired() {
        preconditionInEventLoop()
        armedAt = nil
        runDueTimers()
        // libwebsockets runs its own timer at the start of a pass and then waits on the sockets: what a timer made ready
        // (a job, a message for the end of the pass) would wait for the next event. The pass ends at once instead.
        // (A timerfd's expiry is read with the sockets, after which the pass ends anyway.)
        if !timerDescriptor.isOpen, !readyJobs.isEmpty || !passEnd.isEmpty { lws_cancel_service(context) }
    }

    /// Runs the timers whose deadline has come (after every pass, and when the loop's timer goes off), and sets the
    /// loop's timer for the rest.
    private func runDueTimers() {
        guard let first = timers.first else { return }
        let now = ContinuousClock.now
        guard first.deadline <= now else {
            if armedAt == nil { armTimer() }
            return
        }
        // One at a time: a timer's work may cancel another that is due too.
        while let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            first.work()
        }
        armTimer()
    }
}

/// An error of the transport itself, with what went wrong in words.
public struct TransportError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

private func timerCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = clws_timer_owner(sul) else { return }
    Unmanaged<WebSocketEventLoop>.fromOpaque(owner).takeUnretainedValue().timerFired()
}
