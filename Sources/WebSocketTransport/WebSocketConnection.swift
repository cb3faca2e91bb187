import CLibWebSockets
import FoundationEssentials
import Platform

/// What a connection tells its owner, on the loop thread.
public protocol WebSocketConnectionDelegate: AnyObject {
    func connectionDidOpen(_ connection: WebSocketConnection)
    func connection(_ connection: WebSocketConnection, didReceive message: [UInt8])
    /// A message offered where it stands (text already checked as UTF-8), valid only during the call, before it is
    /// copied for `didReceive`: the delegate takes it if it can and says whether it did (then it goes no further).
    /// By default none is taken.
    func connection(_ connection: WebSocketConnection, takeInPlace message: UnsafeBufferPointer<UInt8>, isText: Bool) -> Bool
    /// Called once per connection, whatever ended it.
    func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason)
}

extension WebSocketConnectionDelegate {
    public func connection(_ connection: WebSocketConnection, takeInPlace message: UnsafeBufferPointer<UInt8>, isText: Bool) -> Bool {
        false
    }
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
    /// A client's own side of the protocol over libwebsockets' raw socket; nil on a listener's connection, which
    /// libwebsockets' WebSocket server role frames.
    private var client: ClientProtocol?
    /// The client's frame reader: a property of its own, so a message handed on while it reads may touch `client`.
    private var frameReader: WebSocketFrameReader?
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

    /// Connects as a client. Over plain TCP, libwebsockets opens the socket in its raw role and the upgrade and the
    /// frames are our own (`ClientProtocol`, `WebSocketFrameReader`): its client reads a frame a byte at a time.
    /// Over TLS its WebSocket client does it all: libwebsockets 4.1's raw client starts TLS before its socket exists
    /// ("tls start fail", EBADF). How long the upgrade may take is the owner's to bound (`close`).
    func open(endpoint: WebSocketEndpoint, context: OpaquePointer?) {
        let hostHeader = endpoint.port == 80 || endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)"
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(keep(endpoint.host))
        info.port = Int32(endpoint.port)
        info.path = UnsafePointer(keep(endpoint.path))
        info.host = UnsafePointer(keep(hostHeader))
        info.local_protocol_name = UnsafePointer(keep("livebridge"))
        switch endpoint.security {
        case .plain:
            client = ClientProtocol(host: hostHeader, path: endpoint.path)
            frameReader = WebSocketFrameReader(maximumSize: assembler.maximumSize)
            info.method = UnsafePointer(keep("RAW"))
        case .tls(_, let allowSelfSigned):
            info.origin = info.host
            info.protocol = nil
            info.ietf_version_or_minus_one = -1
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

    /// A listener's connection received part of a message (libwebsockets frames it). False: drop the connection.
    func received(_ chunk: UnsafeRawBufferPointer, wsi: OpaquePointer) -> Bool {
        let isLast = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        switch assembler.append(chunk, isLast: isLast) {
        case .incomplete:
            return true
        case .complete(let message):
            return deliver(message, isText: lws_frame_is_binary(wsi) == 0, to: delegate ?? Unheard.shared)
        case .tooLarge(let size):
            closeReasonOverride = .messageTooLarge(size: size, limit: assembler.maximumSize)
            return false
        }
    }

    /// Hands a whole message to the delegate. False: drop the connection.
    private func deliver(_ message: [UInt8], isText: Bool, to delegate: any WebSocketConnectionDelegate) -> Bool {
        message.withUnsafeBufferPointer { deliver($0, isText: isText, copy: message, to: delegate) }
    }

    /// Checks a message and offers it to the delegate where it stands, then as an array (`copy`, or made now).
    /// `delegate`: read once per socket read by the caller (a weak load and its retain per message were 2 % of a flood),
    /// and never nil (`Unheard` stands in), so no optional is bound, and no retain made, per message.
    private func deliver(_ message: UnsafeBufferPointer<UInt8>, isText: Bool, copy: [UInt8]? = nil,
                         to delegate: any WebSocketConnectionDelegate) -> Bool {
        // Checked here rather than by libwebsockets, which would close without saying why.
        if isText, !UTF8Validation.isValid(message) {
            closeReasonOverride = .invalidUTF8(size: message.count)
            return false
        }
        if !delegate.connection(self, takeInPlace: message, isText: isText) {
            delegate.connection(self, didReceive: copy ?? Array(message))
        }
        // A large message (a snapshot) and all that was made from it are gone once it is handled: hand the freed heap
        // back to the system here, after the frame itself is released, rather than keep it for months.
        if message.count >= Self.largeMessage { FreedMemory.release() }
        return true
    }

    // MARK: A client's own protocol, over libwebsockets' raw socket

    /// The socket (and TLS) is up: the upgrade request goes out.
    func rawConnected(wsi: OpaquePointer) {
        self.wsi = wsi
        lws_callback_on_writable(wsi)
    }

    /// Bytes from the server: the upgrade's answer, then frames. False: drop the connection.
    func rawReceived(_ bytes: UnsafeRawBufferPointer, wsi: OpaquePointer) -> Bool {
        guard client != nil, !isFinished else { return false }
        guard isEstablished else {
            switch client!.handshake.read(bytes) {
            case .incomplete:
                return true
            case .refused(let why):
                closeReasonOverride = .connectFailed(why)
                return false
            case .upgraded(let rest):
                isEstablished = true
                delegate?.connectionDidOpen(self)
                if isFinished || abortRequested { return !abortRequested }
                if closeRequest != nil || !outgoing.isEmpty { lws_callback_on_writable(wsi) }
                return rest.withUnsafeBytes { readFrames($0, wsi: wsi) }
            }
        }
        return readFrames(bytes, wsi: wsi)
    }

    /// Hands on each frame's event until a close, from the peer or because of what it sent: nothing after that is
    /// read. A failure is answered with a close frame saying why (RFC 6455 §7.1.7) before the socket is dropped.
    private func readFrames(_ bytes: UnsafeRawBufferPointer, wsi: OpaquePointer) -> Bool {
        guard !client!.stoppedReading else { return true }
        let delegate = self.delegate ?? Unheard.shared
        do {
            try frameReader!.read(bytes, inPlace: { message, isText in
                guard !client!.stoppedReading, !abortRequested, !isFinished else { return true }
                if !deliver(message, isText: isText, to: delegate) { fail(code: 1007, wsi: wsi) }
                return true
            }) { event in
                guard !client!.stoppedReading, !abortRequested, !isFinished else { return }
                switch event {
                case .message(let message, let isText):
                    if !deliver(message, isText: isText, to: delegate) { fail(code: 1007, wsi: wsi) }
                case .ping(let payload):
                    guard !client!.closeSent else { return }
                    client!.pong = payload
                    lws_callback_on_writable(wsi)
                case .pong:
                    break
                case .close(let code, let reason):
                    client!.stoppedReading = true
                    if closeRequest == nil {
                        closeReasonOverride = .closedByPeer(code: code, reason: String(decoding: reason, as: UTF8.self))
                    }
                    if client!.closeSent { client!.dropNow = true }
                    // Its code echoed (RFC 6455 §5.5.1); an empty close is answered with an empty one.
                    client!.closeReply = code.map { WebSocketFrameWriter.closePayload(code: $0, reason: "") } ?? []
                    lws_callback_on_writable(wsi)
                }
            }
        } catch {
            // A frame broken after the connection already ended or failed (in the same read) changes nothing.
            guard !client!.stoppedReading, !abortRequested, !isFinished else { return !client!.dropNow }
            switch error {
            case .tooLarge(let size, let limit):
                closeReasonOverride = .messageTooLarge(size: size, limit: limit)
                fail(code: 1009, wsi: wsi)
            case .protocolError:
                closeReasonOverride = .protocolViolation(error.description)
                fail(code: 1002, wsi: wsi)
            }
        }
        return !client!.dropNow
    }

    /// Fails the connection: nothing more is read, a close with `code` goes out, then the socket is dropped (within
    /// two seconds if the socket never becomes writable). The reason is already set.
    private func fail(code: UInt16, wsi: OpaquePointer) {
        client!.stoppedReading = true
        if client!.closeSent { client!.dropNow = true; return }
        client!.closeReply = WebSocketFrameWriter.closePayload(code: code, reason: "")
        lws_callback_on_writable(wsi)
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 2)
    }

    /// Writes what is due, in one write: the upgrade request; or a pong, the next fragment and our close; or alone, the
    /// close that answers the peer's or fails the connection (then the socket is dropped). Nothing after a close.
    /// False: close the socket now.
    func rawWriteable(wsi: OpaquePointer) -> Bool {
        guard client != nil, !abortRequested, !client!.dropNow else { return false }
        let pre = Int(clws_pre())
        writeBuffer.removeAll(keepingCapacity: true)
        writeBuffer.append(contentsOf: repeatElement(0, count: pre))
        var closeAfterWrite = false
        if !client!.requestSent {
            client!.requestSent = true
            writeBuffer.append(contentsOf: client!.request)
        } else if isEstablished, !client!.closeSent {
            if let reply = client!.closeReply {
                client!.closeReply = nil
                client!.closeSent = true
                WebSocketFrameWriter.append(.close, payload: reply, mask: client!.nextMask(), to: &writeBuffer)
                closeAfterWrite = true
            } else {
                if let pong = client!.pong {
                    client!.pong = nil
                    WebSocketFrameWriter.append(.pong, payload: pong, mask: client!.nextMask(), to: &writeBuffer)
                }
                if let fragment = outgoing.next() {
                    WebSocketFrameWriter.append(fragment.isFirst ? .text : .continuation, isFinal: fragment.isLast,
                                                payload: fragment.bytes, mask: client!.nextMask(), to: &writeBuffer)
                }
                if outgoing.isEmpty, let reason = closeRequest {
                    client!.closeSent = true
                    WebSocketFrameWriter.append(.close, payload: WebSocketFrameWriter.closePayload(code: 1000, reason: reason),
                                                mask: client!.nextMask(), to: &writeBuffer)
                    // The server answers with its close, and the socket is dropped then; or after two seconds.
                    lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, 2)
                }
            }
        }
        let count = writeBuffer.count - pre
        if count > 0 {
            let written = writeBuffer.withUnsafeMutableBufferPointer { buffer in
                lws_write(wsi, buffer.baseAddress! + pre, count, lws_write_protocol(UInt32(LWS_WRITE_HTTP.rawValue)))
            }
            if written < count { return false }
        }
        if writeBuffer.capacity > Self.keptWriteCapacity { writeBuffer = [] }
        if closeAfterWrite { return false }
        if isEstablished, !client!.closeSent, !outgoing.isEmpty || closeRequest != nil || client!.closeReply != nil {
            lws_callback_on_writable(wsi)
        }
        return true
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
        // A client's socket that closed before the upgrade was answered never connected.
        var reason = reason
        if client != nil, !isEstablished, reason == .closed {
            reason = .connectFailed("the connection closed before the WebSocket upgrade was answered")
        }
        isFinished = true
        if let wsi { lws_set_opaque_user_data(wsi, nil) }
        wsi = nil
        assembler.reset()
        outgoing.removeAll()
        let finalReason = closeReasonOverride ?? closeRequest.map { CloseReason.closedLocally($0) } ?? reason
        loop.forget(self)
        delegate?.connection(self, didCloseWith: finalReason)
        loop.connectionEnded()
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

/// The delegate of a connection whose owner has gone: what arrives is checked and dropped.
private final class Unheard: WebSocketConnectionDelegate, Sendable {
    static let shared = Unheard()
    func connectionDidOpen(_ connection: WebSocketConnection) {}
    /// Taken where it stands, so it is not copied to be dropped.
    func connection(_ connection: WebSocketConnection, takeInPlace message: UnsafeBufferPointer<UInt8>, isText: Bool) -> Bool { true }
    func connection(_ connection: WebSocketConnection, didReceive message: [UInt8]) {}
    func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason) {}
}
