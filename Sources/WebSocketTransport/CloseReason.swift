/// Why a WebSocket connection ended.
public enum CloseReason: Sendable, Equatable, CustomStringConvertible {
    /// The TCP connection, the TLS handshake or the WebSocket upgrade failed.
    case connectFailed(String)
    /// The peer closed, or the socket was lost.
    case closed
    /// The peer closed with a close frame: its code (none in an empty close) and its reason.
    case closedByPeer(code: UInt16?, reason: String)
    /// This side closed it, saying why.
    case closedLocally(String)
    /// A message grew past the size cap and was dropped.
    case messageTooLarge(size: Int, limit: Int)
    /// A text message was not UTF-8: RFC 6455 says to fail the connection (close code 1007).
    case invalidUTF8(size: Int)
    /// The peer broke the WebSocket protocol (a masked frame from a server, a bad opcode...): the connection is failed.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .connectFailed(let why): return "connection failed: \(why)"
        case .closed: return "connection closed by peer"
        case .closedByPeer(let code, let reason):
            return "connection closed by peer" + (code.map { " (code \($0)" + (reason.isEmpty ? ")" : ": \(reason))") } ?? "")
        case .closedLocally(let why): return "closed: \(why)"
        case .messageTooLarge(let size, let limit):
            return "message of at least \(size) bytes is over the \(limit)-byte limit; dropped"
        case .invalidUTF8(let size): return "a \(size)-byte text message that is not valid UTF-8"
        case .protocolViolation(let why): return why
        }
    }
}
