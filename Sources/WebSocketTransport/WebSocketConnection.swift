import CLibWebSockets
import FoundationEssentials
import Platform

/// What a connection tells its owner, on the loop thread.
public protocol WebSocketConnectionDelegate: AnyObject {
    func connectionDidOpen(_ connection: WebSocketConnection)
    func connection(_ connection: WebSocketConnection, didReceive message: [UInt8])
    /// Called once per connection, whatever ended it.
    func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason)
}

/// One WebSocket, client or server side. Confined to its loop's thread.
public final class WebSocketConnection: @unchecked Sendable {
    public weak var delegate: (any WebSocketConnectionDelegate)?
    public unowned let loop: WebSocketEventLoop

    private var wsi: OpaquePointer?
    private var assembler: MessageAssembler
    private var outgoing: OutgoingMessages
    private var closeRequest: String?
    private var closeReasonOverride: CloseReason?
    private var isFinished = false
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var writeBuffer: [UInt8] = []
    private static let keptWriteCapacity = 16 * 1024
    private static let largeMessage = 256 * 1024

    init(loop: WebSocketEventLoop, maximumMessageSize: Int, fragmentSize: Int) {
        self.loop = loop
        assembler = MessageAssembler(maximumSize: maximumMessageSize)
        outgoing = OutgoingMessages(fragmentSize: fragmentSize)
    }

    deinit {
        for s in cStrings { free(s) }
    }

    // MARK: Commands (loop thread)

    /// Queues a text message.
    public func send(_ text: String) {
        send(bytes: Array(text.utf8))
    }

    public func send(bytes: [UInt8]) {
        loop.preconditionInEventLoop()
        guard let wsi, !isFinished, closeRequest == nil else { return }
        outgoing.append(bytes)
        lws_callback_on_writable(wsi)
    }

    /// Closes the connection once the messages already queued are written.
    public func close(reason: String) {
        loop.preconditionInEventLoop()
        guard let wsi, !isFinished, closeRequest == nil else { return }
        closeRequest = reason
        if isEstablished {
            lws_callback_on_writable(wsi)
        } else {
            // Still connecting: libwebsockets kills it at its next service.
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
    }

    private var isEstablished = false
    private var abortRequested = false

    /// Drops the socket without a closing handshake, as a lost network would.
    public func abort(reason: String = "aborted") {
        loop.preconditionInEventLoop()
        guard let wsi, !isFinished else { return }
        abortRequested = true
        closeRequest = closeRequest ?? reason
        outgoing.removeAll()
        if isEstablished {
            lws_callback_on_writable(wsi)
        } else {
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        }
    }

    // MARK: Events from the callback

    func open(endpoint: WebSocketEndpoint, context: OpaquePointer?) {
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(keep(endpoint.host))
        info.port = Int32(endpoint.port)
        info.path = UnsafePointer(keep(endpoint.path))
        let hostHeader = endpoint.port == 80 || endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)"
        info.host = UnsafePointer(keep(hostHeader))
        info.origin = info.host
        info.protocol = nil
        info.local_protocol_name = UnsafePointer(keep("livebridge"))
        info.ietf_version_or_minus_one = -1
        if case .tls(_, let allowSelfSigned) = endpoint.security {
            var flags = Int32(LCCSCF_USE_SSL.rawValue)
            if allowSelfSigned {
                flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue) | Int32(LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
            }
            info.ssl_connection = flags
        }
        info.opaque_user_data = Unmanaged.passUnretained(self).toOpaque()
        wsi = lws_client_connect_via_info(&info)
        if wsi == nil {
            // The failure may already have been reported through CLIENT_CONNECTION_ERROR.
            let loop = self.loop
            loop.schedule(after: .zero) { [self] in
                finish(.connectFailed("could not start connecting to \(endpoint.host):\(endpoint.port)"))
            }
        }
    }

    func attach(wsi: OpaquePointer) {
        self.wsi = wsi
        isEstablished = true
        lws_set_opaque_user_data(wsi, Unmanaged.passUnretained(self).toOpaque())
    }

    func established(wsi: OpaquePointer) {
        self.wsi = wsi
        isEstablished = true
        delegate?.connectionDidOpen(self)
    }

    /// Returns false when the connection must be dropped.
    func received(_ chunk: UnsafeRawBufferPointer, wsi: OpaquePointer) -> Bool {
        let isLast = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        var delivered = 0
        func assemble() -> Bool {
            switch assembler.append(chunk, isLast: isLast) {
            case .incomplete:
                return true
            case .complete(let message):
                // Checked here rather than by libwebsockets, which would close without saying why.
                if lws_frame_is_binary(wsi) == 0, !UTF8Validation.isValid(message) {
                    closeReasonOverride = .invalidUTF8(size: message.count)
                    return false
                }
                delivered = message.count
                delegate?.connection(self, didReceive: message)
                return true
            case .tooLarge(let size):
                closeReasonOverride = .messageTooLarge(size: size, limit: assembler.maximumSize)
                return false
            }
        }
        let keep = assemble()
        // A large message (a snapshot) and all that was made from it are gone once it is handled: hand the freed heap
        // back to the system here, after the frame itself is released, rather than keep it for months.
        if delivered >= Self.largeMessage { FreedMemory.release() }
        return keep
    }

    /// Writes one fragment. Returns false when the connection must be closed now.
    func writeable(wsi: OpaquePointer) -> Bool {
        if abortRequested { return false }
        if let reason = closeRequest, outgoing.isEmpty {
            var text = Array(reason.utf8.prefix(120))
            text.withUnsafeMutableBufferPointer { buffer in
                lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, buffer.baseAddress, buffer.count)
            }
            return false
        }
        guard let fragment = outgoing.next() else { return true }
        let pre = Int(clws_pre())
        writeBuffer.removeAll(keepingCapacity: true)
        writeBuffer.append(contentsOf: repeatElement(0, count: pre))
        writeBuffer.append(contentsOf: fragment.bytes)
        let flags = lws_write_ws_flags(Int32(LWS_WRITE_TEXT.rawValue), fragment.isFirst ? 1 : 0, fragment.isLast ? 1 : 0)
        let written = writeBuffer.withUnsafeMutableBufferPointer { buffer in
            lws_write(wsi, buffer.baseAddress! + pre, fragment.bytes.count, lws_write_protocol(UInt32(flags)))
        }
        // Kept for the next small message; a large one (a subscription naming thousands of entities) gives its room back.
        if writeBuffer.capacity > Self.keptWriteCapacity { writeBuffer = [] }
        if written < fragment.bytes.count { return false }
        if !outgoing.isEmpty || closeRequest != nil { lws_callback_on_writable(wsi) }
        return true
    }

    /// The socket is gone (closed, failed or destroyed). Reports once.
    func finish(_ reason: CloseReason) {
        guard !isFinished else { return }
        isFinished = true
        if let wsi { lws_set_opaque_user_data(wsi, nil) }
        wsi = nil
        assembler.reset()
        outgoing.removeAll()
        let finalReason = closeReasonOverride ?? closeRequest.map { CloseReason.closedLocally($0) } ?? reason
        loop.forget(self)
        delegate?.connection(self, didCloseWith: finalReason)
    }

    func contextDestroyed() {
        finish(.closedLocally("event loop stopped"))
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        cStrings.append(copy)
        return copy
    }
}
