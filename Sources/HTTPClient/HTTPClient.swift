import Platform
/// HTTP over libcurl for one backend: its connections reused, connect and total timeouts, TLS verification on,
/// proxies from the environment (libcurl reads http_proxy/https_proxy/no_proxy), `User-Agent: livebridge/<version>`.
///
/// Requests run concurrently on the client's `TransferLoop` (libcurl's multi interface on one thread). Tokens
/// travel only in headers and never reach a log or an error.
public final class HTTPClient: Sendable {
    /// Transfers run at once to one host (scheme, host and port); more wait their turn, in order.
    public static let transfersAtOncePerHost = TransferLoop.maximumConnectionsPerHost

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
        /// How long the transfer loop sleeps with nothing to do before it looks at its inbox again. Every submit wakes
        /// it, so this is only a safety net; a test sets it long, so that a lost wake-up hangs instead of being slow.
        public var idlePoll: Duration = .seconds(1)
        public init() {}
    }

    public let options: Options
    private let loop: TransferLoop

    public init(options: Options = Options()) {
        self.options = options
        loop = TransferLoop(options: options)
    }

    deinit { loop.shutdown() }

    /// Sends and waits for the answer, off the caller's thread. Cancelling the waiting task ends the transfer at once
    /// (failing with `CURLE_ABORTED_BY_CALLBACK`): a service stopping does not wait out a silent server.
    public func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        let (loop, options) = (self.loop, self.options)
        let transfer = Locked<TransferLoop.Transfer?>(nil)
        let result: Result<HTTPResponse, HTTPTransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let made = TransferLoop.Transfer(request: request, limits: options) { continuation.resume(returning: $0) }
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
