/// Reads a server's WebSocket frames (RFC 6455 §5) from the bytes of a client socket, as they arrive in reads of any
/// size, and hands on whole messages and control frames.
///
/// The client's own reader: libwebsockets' client passes every received byte through a state machine one at a time,
/// which cost about as much as the rest of a change's handling. Here a frame's header is read once and its payload
/// copied in one piece. Everything RFC 6455 requires a client to refuse is refused, with why: a masked frame, reserved
/// bits (no extension is negotiated), an unknown opcode, a fragmented or oversized control frame, a continuation
/// without a message or a message begun inside another, a 64-bit length with its top bit set, and a close frame of one
/// byte, with a code no peer may send, or with a reason that is not UTF-8. A message over `maximumSize` is refused as soon as its header says so: its bytes are never buffered.
public struct WebSocketFrameReader: Sendable {
    public enum Event: Equatable, Sendable {
        /// A whole message: its fragments joined. Text is not checked for UTF-8 here (the connection does).
        case message([UInt8], isText: Bool)
        case ping([UInt8])
        case pong([UInt8])
        /// The peer's close frame: its code, if any (none for an empty close), and its reason's bytes.
        case close(code: UInt16?, reason: [UInt8])
    }

    public enum ReadError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The peer broke the protocol (close code 1002).
        case protocolError(String)
        /// A message is over the limit; `size` is what its frames announced so far.
        case tooLarge(size: Int, limit: Int)

        public var description: String {
            switch self {
            case .protocolError(let why): return "WebSocket protocol error: \(why)"
            case .tooLarge(let size, let limit): return "a message of at least \(size) bytes is over the \(limit)-byte limit"
            }
        }
    }

    public let maximumSize: Int

    /// The header being read: up to 14 bytes (2, an extended length of 2 or 8, and a mask the server must not send).
    private var header: (UInt64, UInt64) = (0, 0)
    private var headerCount = 0
    /// The frame whose payload is being read, once its header is whole.
    private var frame: Frame?
    /// The data message being assembled across frames, and whether it is text.
    private var message: [UInt8] = []
    private var messageIsText: Bool?
    /// Set after a failure: nothing more is read.
    private var failed = false
    /// Set once a close frame is read: the bytes after it are ignored.
    private var closed = false

    private struct Frame {
        let opcode: UInt8
        let isFinal: Bool
        var remaining: Int
        /// A control frame's payload (at most 125 bytes); data frames go straight to `message`.
        var control: [UInt8]
    }

    public init(maximumSize: Int) {
        self.maximumSize = maximumSize
    }

    /// Bytes held for a message not yet whole.
    public var pendingCount: Int { message.count }

    /// Reads `bytes`, handing each complete event to `handle` in order. A failure stops the reader for good.
    public mutating func read(_ bytes: UnsafeRawBufferPointer, _ handle: (Event) -> Void) throws(ReadError) {
        try read(bytes, inPlace: { _, _ in false }, handle)
    }

    /// `read`, offering a message that is whole inside `bytes` (one frame, in this read) to `inPlace` first, where it
    /// stands (the buffer is valid only during the call): one it takes (true) is not copied or handed to `handle`.
    /// Most messages arrive so.
    public mutating func read(_ bytes: UnsafeRawBufferPointer, inPlace: (UnsafeBufferPointer<UInt8>, _ isText: Bool) -> Bool,
                              _ handle: (Event) -> Void) throws(ReadError) {
        guard !failed else { throw .protocolError("the connection already failed") }
        // Nothing follows a close (RFC 6455 §5.5.1): what comes after it is not read.
        guard !closed else { return }
        do {
            try readAll(bytes, inPlace, handle)
        } catch {
            failed = true
            message = []
            frame = nil
            throw error
        }
    }

    private mutating func readAll(_ bytes: UnsafeRawBufferPointer, _ inPlace: (UnsafeBufferPointer<UInt8>, Bool) -> Bool,
                                  _ handle: (Event) -> Void) throws(ReadError) {
        var offset = 0
        let count = bytes.count
        while offset < count, !closed {
            if frame == nil {
                // Fast path: a whole header in this read.
                let available = count - offset
                if headerCount == 0, available >= 2 {
                    let needed = Self.headerLength(bytes[offset], bytes[offset + 1])
                    if available >= needed {
                        try begin(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + needed]))
                        offset += needed
                        try finishIfEmpty(handle)
                        continue
                    }
                }
                try readHeaderByte(bytes[offset], handle)
                offset += 1
                continue
            }
            let take = min(frame!.remaining, count - offset)
            // Typed, so copies are one memcpy in every build (a raw buffer is copied byte by byte where unoptimised).
            let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + take]).assumingMemoryBound(to: UInt8.self)
            offset += take
            if frame!.opcode >= 0x8 {
                frame!.control.append(contentsOf: piece)
            } else if frame!.isFinal, message.isEmpty, take == frame!.remaining {
                // A whole one-frame message in this read: read where it stands, or one copy, straight out.
                frame = nil
                let isText = messageIsText ?? false
                messageIsText = nil
                if !inPlace(piece, isText) { handle(.message(Array(piece), isText: isText)) }
                continue
            } else {
                message.append(contentsOf: piece)
            }
            frame!.remaining -= take
            try finishIfEmpty(handle)
        }
    }

    /// Whether a peer may put `code` in a close frame (RFC 6455 §7.4, and the IANA registry's 1012–1014): 1005, 1006
    /// and 1015 only stand for "none", "dropped" and "TLS failed" locally; 1016–2999 are unassigned.
    static func isSendable(closeCode code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    /// How long a header is, from its first two bytes.
    private static func headerLength(_ first: UInt8, _ second: UInt8) -> Int {
        let masked = second & 0x80 != 0 ? 4 : 0
        switch second & 0x7F {
        case 126: return 4 + masked
        case 127: return 10 + masked
        default: return 2 + masked
        }
    }

    /// A header arriving split across reads: gathered byte by byte (at most 14).
    private mutating func readHeaderByte(_ byte: UInt8, _ handle: (Event) -> Void) throws(ReadError) {
        withUnsafeMutableBytes(of: &header) { $0[headerCount] = byte }
        headerCount += 1
        let whole = header
        let length = headerCount
        let (first, second) = withUnsafeBytes(of: whole) { ($0[0], $0[1]) }
        guard length >= 2, length == Self.headerLength(first, second) else { return }
        headerCount = 0
        let begun = withUnsafeBytes(of: whole) { raw in
            Result { () throws(ReadError) in try begin(UnsafeRawBufferPointer(rebasing: raw[..<length])) }
        }
        try begun.get()
        try finishIfEmpty(handle)
    }

    /// Checks a whole header and starts its frame.
    private mutating func begin(_ header: UnsafeRawBufferPointer) throws(ReadError) {
        let first = header[0], second = header[1]
        if first & 0x70 != 0 { throw .protocolError("reserved bits set (\(String(first & 0x70, radix: 2))) with no extension agreed") }
        if second & 0x80 != 0 { throw .protocolError("a masked frame from the server") }
        let opcode = first & 0x0F
        let isFinal = first & 0x80 != 0
        var length: UInt64
        switch second & 0x7F {
        case 126:
            // A length longer than it need be is taken, as libwebsockets takes it: it harms nothing.
            length = UInt64(header[2]) << 8 | UInt64(header[3])
        case 127:
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(header[i]) }
            if length >> 63 != 0 { throw .protocolError("a 64-bit length with its top bit set") }
        default:
            length = UInt64(second & 0x7F)
        }
        switch opcode {
        case 0x8, 0x9, 0xA:
            if !isFinal { throw .protocolError("a fragmented control frame (opcode \(opcode))") }
            if length > 125 { throw .protocolError("a control frame (opcode \(opcode)) of \(length) bytes, over 125") }
            frame = Frame(opcode: opcode, isFinal: true, remaining: Int(length), control: [])
            return
        case 0x0:
            if messageIsText == nil { throw .protocolError("a continuation frame with no message begun") }
        case 0x1, 0x2:
            if messageIsText != nil { throw .protocolError("a new message (opcode \(opcode)) before the last one ended") }
            messageIsText = opcode == 0x1
        default:
            throw .protocolError("an unknown opcode \(opcode)")
        }
        let total = UInt64(message.count) + length
        if total > UInt64(maximumSize) {
            throw .tooLarge(size: total > UInt64(Int.max) ? Int.max : Int(total), limit: maximumSize)
        }
        frame = Frame(opcode: opcode, isFinal: isFinal, remaining: Int(length), control: [])
    }

    /// A frame whose payload is all read: a control frame or a message's last fragment is handed on.
    private mutating func finishIfEmpty(_ handle: (Event) -> Void) throws(ReadError) {
        guard let current = frame, current.remaining == 0 else { return }
        frame = nil
        switch current.opcode {
        case 0x8:
            let payload = current.control
            if payload.count == 1 { throw .protocolError("a close frame of one byte") }
            let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
            if let code, !Self.isSendable(closeCode: code) { throw .protocolError("a close frame with code \(code), which no peer may send") }
            let reason = Array(payload.dropFirst(2))
            if String(validating: reason, as: UTF8.self) == nil { throw .protocolError("a close frame whose reason is not UTF-8") }
            closed = true
            handle(.close(code: code, reason: reason))
        case 0x9:
            handle(.ping(current.control))
        case 0xA:
            handle(.pong(current.control))
        default:
            guard current.isFinal else { return }
            var whole: [UInt8] = []
            swap(&whole, &message)
            let isText = messageIsText ?? false
            messageIsText = nil
            handle(.message(whole, isText: isText))
        }
    }
}
