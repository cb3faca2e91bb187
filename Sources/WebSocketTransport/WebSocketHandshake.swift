import FoundationEssentials
import Platform

/// A client's opening handshake (RFC 6455 §4.1): the upgrade request, and the check of the server's answer.
///
/// The answer is read up to its blank line, at most `maximumResponseSize` bytes; what follows it is the first of the
/// server's frames. Anything but `101` with `Upgrade: websocket`, `Connection: upgrade` and the right
/// `Sec-WebSocket-Accept` fails the connection, saying what came instead.
public struct WebSocketHandshake: Sendable {
    /// The nonce's base64, sent as `Sec-WebSocket-Key`.
    public let key: String
    public static let maximumResponseSize = 16 << 10
    private var response: [UInt8] = []

    public init(nonce: [UInt8]) {
        key = Data(nonce).base64EncodedString()
    }

    /// A random 16-byte nonce, as the RFC asks.
    static func randomNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// The GET that asks for the upgrade. `host` is the Host header's value (with the port when not the default).
    func request(host: String, path: String) -> [UInt8] {
        let text = "GET \(path) HTTP/1.1\r\n"
            + "Host: \(host)\r\n"
            + "Upgrade: websocket\r\n"
            + "Connection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\n"
            + "Sec-WebSocket-Version: 13\r\n"
            + "\r\n"
        return Array(text.utf8)
    }

    /// What `Sec-WebSocket-Accept` must say for `key`.
    public static func expectedAccept(for key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    public enum Outcome: Equatable, Sendable {
        /// More of the answer is needed.
        case incomplete
        /// Upgraded; `rest` is what followed the answer's headers (frames already sent).
        case upgraded(rest: [UInt8])
        case refused(String)
    }

    /// Takes the answer's bytes as they come.
    public mutating func read(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        let searchFrom = max(0, response.count - 3)
        response.append(contentsOf: bytes)
        guard let end = Self.endOfHeaders(response, from: searchFrom) else {
            if response.count > Self.maximumResponseSize {
                return .refused("the server's answer to the WebSocket upgrade has no end of headers in its first \(Self.maximumResponseSize) bytes")
            }
            return .incomplete
        }
        if end > Self.maximumResponseSize {
            return .refused("the server's answer to the WebSocket upgrade has headers over \(Self.maximumResponseSize) bytes")
        }
        let rest = Array(response[end...])
        let head = String(decoding: response[..<end], as: UTF8.self)
        response = []
        if let problem = check(head) { return .refused(problem) }
        return .upgraded(rest: rest)
    }

    /// Where the headers end (after CR LF CR LF), searching from `start`.
    private static func endOfHeaders(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var i = start
        while i + 3 < bytes.count {
            if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13, bytes[i + 3] == 10 { return i + 4 }
            i += 1
        }
        return nil
    }

    /// Why the answer is not an upgrade, or nil when it is. The server's own text is quoted (`OutsideText.quoted`).
    private func check(_ head: String) -> String? {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: true)
        guard let statusLine = lines.first else { return "the server gave an empty answer to the WebSocket upgrade" }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else {
            return "the server did not answer the WebSocket upgrade in HTTP (\(OutsideText.quoted(String(statusLine))))"
        }
        guard parts[1] == "101" else {
            return "the server answered the WebSocket upgrade with HTTP \(OutsideText.quoted(parts.dropFirst().joined(separator: " "))), not 101"
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingSpaces().lowercased()
            let value = String(line[line.index(after: colon)...]).trimmingSpaces()
            headers[name] = headers[name].map { $0 + "," + value } ?? value
        }
        guard let upgrade = headers["upgrade"], upgrade.lowercased() == "websocket" else {
            return "the server's 101 answer has Upgrade: \((headers["upgrade"].map { OutsideText.quoted($0) } ?? "none")), not websocket"
        }
        let connection = (headers["connection"] ?? "").lowercased().split(separator: ",").map { $0.trimmingSpaces() }
        guard connection.contains("upgrade") else {
            return "the server's 101 answer has Connection: \((headers["connection"].map { OutsideText.quoted($0) } ?? "none")), not upgrade"
        }
        guard headers["sec-websocket-accept"] == Self.expectedAccept(for: key) else {
            return "the server's 101 answer has the wrong Sec-WebSocket-Accept (\((headers["sec-websocket-accept"].map { OutsideText.quoted($0) } ?? "none")))"
        }
        if let extensions = headers["sec-websocket-extensions"], !extensions.isEmpty {
            return "the server's 101 answer agrees to extensions not asked for (\(OutsideText.quoted(extensions)))"
        }
        if let subprotocol = headers["sec-websocket-protocol"], !subprotocol.isEmpty {
            return "the server's 101 answer names a subprotocol not asked for (\(OutsideText.quoted(subprotocol)))"
        }
        return nil
    }
}
