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

        public init() {}
    }

    public let options: Options
    /// The port the listener is bound to; 0 for a client-only loop.
    public private(set) var listenPort: Int = 0

    /// Called on the loop thread for every connection a listener accepts.
    public var onAccept: (@Sendable (WebSocketConnection) -> Void)?
    /// Serves plain HTTP requests to the listener (WebSocket upgrades go to `onAccept`); nil answers 404.
    public var onHTTPRequest: HTTPHandler?
    var httpExchanges: [OpaquePointer: HTTPExchange] = [:]

    private var context: OpaquePointer?
    private let pending = Mutex<[@Sendable () -> Void]>([])
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    // Strings and tables libwebsockets keeps pointers to, alive until the context is destroyed.
    private var protocols: UnsafeMutablePointer<lws_protocols>
    private var cStrings: [UnsafeMutablePointer<CChar>] = []

    // Confined to the loop thread.
    private var timer: UnsafeMutablePointer<clws_timer>
    private var timers: [ScheduledTimer] = []
    private var nextTimerID = 0
    var connections: [ObjectIdentifier: WebSocketConnection] = [:]

    public init(options: Options) throws {
        self.options = options
        protocols = .allocate(capacity: 2)
        timer = .allocate(capacity: 1)
        timer.initialize(to: clws_timer())
        clws_quiet_logging()

        let protocolName = strdup("livebridge")!
        cStrings.append(protocolName)
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = webSocketCallback
        protocols[0].rx_buffer_size = 64 << 10
        protocols[1] = lws_protocols()

        var info = lws_context_creation_info()
        info.protocols = UnsafePointer(protocols)
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        if options.usesTLS || options.serverCertificate != nil { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        // A few descriptors beyond the connections: the cancel pipe and the listener.
        if let maximum = options.maximumConnections { info.fd_limit_per_thread = UInt32(maximum + 4) }
        info.gid = -1
        info.uid = -1
        if let listen = options.listen {
            info.port = Int32(listen.port)
            info.iface = UnsafePointer(keep(listen.host))
            if let certificate = options.serverCertificate {
                info.ssl_cert_filepath = UnsafePointer(keep(certificate.certificate))
                info.ssl_private_key_filepath = UnsafePointer(keep(certificate.key))
            }
        } else {
            info.port = CONTEXT_PORT_NO_LISTEN
        }
        if let caFile = options.clientCAFile {
            info.client_ssl_ca_filepath = UnsafePointer(keep(caFile))
        }
        info.user = Unmanaged.passUnretained(self).toOpaque()
        guard let context = lws_create_context(&info) else {
            Self.release(protocols: protocols, timer: timer, strings: cStrings)
            throw TransportError("libwebsockets could not create its context"
                + (options.listen.map { " listening on \($0.host):\($0.port)" } ?? ""))
        }
        self.context = context
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        if options.listen != nil, let vhost = lws_get_vhost_by_name(context, "default") {
            listenPort = Int(lws_get_vhost_listen_port(vhost))
        }
        // The thread holds the loop until shutdown: a loop lives as long as it runs.
        DetachedThread.start(name: options.name, stackSize: 8 << 20) { self.run() }
    }

    deinit {
        Self.release(protocols: protocols, timer: timer, strings: cStrings)
    }

    private static func release(protocols: UnsafeMutablePointer<lws_protocols>, timer: UnsafeMutablePointer<clws_timer>,
                                strings: [UnsafeMutablePointer<CChar>]) {
        protocols.deallocate()
        timer.deallocate()
        for s in strings { free(s) }
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        cStrings.append(copy)
        return copy
    }

    /// Runs `work` on the loop thread, soon. Safe from any thread.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
        if let context { lws_cancel_service(context) }
    }

    /// Stops the loop: every connection is dropped and the context destroyed. Blocks until done.
    /// Must not be called from the loop thread.
    public func shutdown() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let context { lws_cancel_service(context) }
        finished.wait()
    }

    private func run() {
        while !stopRequested.load(ordering: .acquiring) {
            if lws_service(context, 0) < 0 { break }
        }
        lws_sul_cancel(&timer.pointee.sul)
        lws_context_destroy(context)
        context = nil
        for connection in connections.values { connection.contextDestroyed() }
        connections = [:]
        httpExchanges = [:]
        timers = []
        let leftover = pending.withLock { queue in defer { queue = [] }; return queue }
        _ = leftover
        finished.signal()
    }

    /// Drains work queued by other threads (LWS_CALLBACK_EVENT_WAIT_CANCELLED).
    func runPending() {
        let work = pending.withLock { queue -> [@Sendable () -> Void] in
            defer { queue = [] }
            return queue
        }
        for item in work { item() }
    }

    // MARK: HTTP

    func httpBegan(wsi: OpaquePointer, uri: String) {
        let exchange = HTTPExchange.begin(wsi: wsi, uri: uri)
        httpExchanges[wsi] = exchange
        let length = Int(exchange.headers["content-length"] ?? "0") ?? 0
        if length == 0 { httpBodyComplete(wsi: wsi) }
    }

    func httpBody(wsi: OpaquePointer, _ chunk: UnsafeRawBufferPointer) {
        httpExchanges[wsi]?.body.append(contentsOf: chunk)
    }

    func httpBodyComplete(wsi: OpaquePointer) {
        guard let exchange = httpExchanges[wsi] else { return }
        guard let handler = onHTTPRequest else {
            exchange.response = HTTPServerResponse(status: 404, json: #"{"error":"not found"}"#)
            lws_callback_on_writable(wsi)
            return
        }
        let wsiAddress = UInt(bitPattern: wsi)
        handler(exchange.request) { [weak self] response in
            self?.perform { [weak self] in
                // The exchange may be gone (client hung up); then the answer is dropped.
                guard let self, let wsi = OpaquePointer(bitPattern: wsiAddress), let exchange = self.httpExchanges[wsi],
                      exchange.response == nil else { return }
                exchange.response = response
                lws_callback_on_writable(wsi)
            }
        }
    }

    func httpWriteable(wsi: OpaquePointer) -> Bool {
        guard let exchange = httpExchanges[wsi] else { return true }
        let keep = exchange.writeable(wsi: wsi)
        if exchange.headersSent, exchange.response != nil, !keep || exchange.isFinished { httpExchanges[wsi] = nil }
        return keep
    }

    func httpClosed(wsi: OpaquePointer) {
        httpExchanges[wsi] = nil
    }

    // MARK: Client connections

    /// Opens a client connection; its delegate hears of the outcome on the loop thread.
    /// Call on the loop thread.
    public func connect(to endpoint: WebSocketEndpoint, delegate: WebSocketConnectionDelegate) -> WebSocketConnection {
        let connection = WebSocketConnection(loop: self, maximumMessageSize: options.maximumMessageSize,
                                             fragmentSize: options.fragmentSize)
        connection.delegate = delegate
        connections[ObjectIdentifier(connection)] = connection
        connection.open(endpoint: endpoint, context: context)
        return connection
    }

    func accepted(wsi: OpaquePointer) -> WebSocketConnection {
        let connection = WebSocketConnection(loop: self, maximumMessageSize: options.maximumMessageSize,
                                             fragmentSize: options.fragmentSize)
        connection.attach(wsi: wsi)
        connections[ObjectIdentifier(connection)] = connection
        onAccept?(connection)
        return connection
    }

    func forget(_ connection: WebSocketConnection) {
        connections[ObjectIdentifier(connection)] = nil
    }

    // MARK: Timers

    private struct ScheduledTimer {
        let id: Int
        let deadline: ContinuousClock.Instant
        let work: () -> Void
    }

    /// A timer that can be cancelled.
    public struct TimerToken: Sendable, Hashable { let id: Int }

    /// Runs `work` on the loop thread after `delay`. Call on the loop thread.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> TimerToken {
        nextTimerID += 1
        let entry = ScheduledTimer(id: nextTimerID, deadline: .now + delay, work: work)
        let index = timers.firstIndex { $0.deadline > entry.deadline } ?? timers.count
        timers.insert(entry, at: index)
        if index == 0 { armTimer() }
        return TimerToken(id: entry.id)
    }

    /// Cancels a timer that has not fired yet. Call on the loop thread.
    public func cancel(_ token: TimerToken) {
        timers.removeAll { $0.id == token.id }
    }

    private func armTimer() {
        guard let context, let first = timers.first else { return }
        let delay = ContinuousClock.now.duration(to: first.deadline)
        let (seconds, attoseconds) = delay.components
        let microseconds = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        lws_sul_schedule(context, 0, &timer.pointee.sul, timerCallback, lws_usec_t(microseconds))
    }

    func timerFired() {
        let now = ContinuousClock.now
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
