/// What a client connection holds of the protocol it speaks itself: the upgrade, what it owes the server (a pong, the
/// answer to a close) and how far the closing handshake has gone. Confined to the connection's loop.
struct ClientProtocol {
    var handshake: WebSocketHandshake
    /// The upgrade request, made once.
    let request: [UInt8]
    var requestSent = false
    /// The latest ping's payload, to answer (RFC 6455 §5.5.3: answering the latest of several is enough).
    var pong: [UInt8]?
    /// The payload of the close that answers the server's, or that fails the connection: written alone, then the
    /// socket is dropped.
    var closeReply: [UInt8]?
    var closeSent = false
    /// A close came in, or what came broke the protocol: nothing more is read.
    var stoppedReading = false
    /// Our close was out and the server's came (or it failed): the socket goes now.
    var dropNow = false
    private var generator = SystemRandomNumberGenerator()

    init(host: String, path: String) {
        handshake = WebSocketHandshake(nonce: WebSocketHandshake.randomNonce())
        request = handshake.request(host: host, path: path)
    }

    /// A fresh masking key for each frame, from the system's random source (RFC 6455 §5.3: unpredictable).
    mutating func nextMask() -> UInt32 { UInt32.random(in: .min ... .max, using: &generator) }
}
