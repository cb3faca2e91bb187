import Platform
public import WebSocketTransport

/// HTTP over libcurl for one backend: its connections reused, connect and total timeouts, TLS verification on,
/// proxies from the environment (libcurl reads http_proxy/https_proxy/no_proxy), `User-Agent: livebridge/<version>`.
///
/// Requests run concurrently on libcurl's multi interface: on a thread of the client's own (`TransferLoop`), or on an
/// event loop's thread beside its sockets (`HostedTransfers`, the daemon's backends). Tokens
/// travel only in headers and never reach a log or an error.
public final class HTTPClient: Sendable {
    /// Transfers run at once to one host (scheme, host and port); more wait their turn, in order.
    public static let transfersAtOncePerHost = TransferTable.maximumConnectionsPerHost

    public struct Options: Sendable {
        public var connectTimeout: Duration = .seconds(5)
        public var totalTimeout: Duration = .seconds(15)
        public var userAgent = "livebridge/" + LiveBridgeVersion.current
        /// A PEM bundle to trust instead of the system store (tests with their own CA).
        public var caFile: String?
        /// The most of an answer's body read: past it the transfer fails and its connection is dropped, so a service
        /// (or something posing as one) cannot fill memory. Every answer LiveBridge parses is a few hundred bytes.
        public var maximumResponseBody = 256 << 10
        /// The most header bytes of an answer taken in, likewise.
        public var maximumHeaderBytes = 64 << 10
        /// How long a client's own transfer thread sleeps with nothing to do before it looks at its inbox again (not used
        /// on an event loop, which polls libcurl's sockets). Every submit wakes it, so this is only a safety net; a test sets it long, so that a lost wake-up hangs instead of being slow.
        public var idlePoll: Duration = .seconds(1)
        public init() {}
    }

    public let options: Options
    private let loop: any TransferDriver

    /// `loop`: the event loop to run the transfers on, beside its sockets (the daemon's socket thread: a push wakes no
    /// other thread); nil, a thread of the client's own.
    public init(options: Options = Options(), on loop: WebSocketEventLoop? = nil) {
        self.options = options
        self.loop = loop.map { HostedTransfers(loop: $0, options: options) } ?? TransferLoop(options: options)
    }

    deinit { loop.shutdown() }

    /// Sends and waits for the answer without holding the caller's thread (libcurl runs on the client's thread or on its
    /// event loop, between the loop's passes). Cancelling the waiting task ends the transfer at once
    /// (failing with `CURLE_ABORTED_BY_CALLBACK`): a service stopping does not wait out a silent server.
    /// Runs where its caller runs (`nonisolated(nonsending)`): the call itself takes no step off the caller's actor
    /// (the cancellation handler's operation still steps off and back once: it is not isolated to its caller in Swift 6.3).
    nonisolated(nonsending) public func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        let (loop, options) = (self.loop, self.options)
        let transfer = Locked<Transfer?>(nil)
        let result: Result<HTTPResponse, HTTPTransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let made = Transfer(request: request, limits: options) { continuation.resume(returning: $0) }
                transfer.withLock { $0 = made }
                loop.submit(made)
                // Cancelled before it was handed over: the loop ends it once it has it (cancels are read after submits).
                if Task.isCancelled { loop.cancel(made) }
            }
        } onCancel: {
            if let made = transfer.withLock({ $0 }) { loop.cancel(made) }
        }
        return try result.get()
    }

    static func milliseconds(_ d: Duration) -> Int { Int(d.wholeMilliseconds) }
}
