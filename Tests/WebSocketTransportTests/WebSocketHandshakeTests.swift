import Platform
import Testing
@testable import WebSocketTransport

/// The opening handshake (RFC 6455 §4): the request, and the server's answer checked.
struct WebSocketHandshakeTests {
    static let nonce: [UInt8] = Array("the sample nonce".utf8)

    static func answer(status: String = "101 Switching Protocols", headers: [String]) -> [UInt8] {
        Array(("HTTP/1.1 \(status)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n").utf8)
    }

    static let good = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]

    static func read(_ bytes: [UInt8], cuts: [Int] = []) -> WebSocketHandshake.Outcome {
        var handshake = WebSocketHandshake(nonce: nonce)
        var start = 0
        for end in cuts + [bytes.count] {
            let outcome = bytes[start..<end].withUnsafeBytes { handshake.read($0) }
            if outcome != .incomplete || end == bytes.count { return outcome }
            start = end
        }
        return .incomplete
    }

    @Test func theRFCsExampleKeyAndAcceptAndSHA1() {
        #expect(WebSocketHandshake(nonce: Self.nonce).key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(WebSocketHandshake.expectedAccept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        func hex(_ text: String) -> String { SHA1.digest(Array(text.utf8)).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined() }
        #expect(hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(String(repeating: "a", count: 1000)) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
    }

    @Test func theRequestAsksForVersion13WithTheKey() {
        let request = String(decoding: WebSocketHandshake(nonce: Self.nonce).request(host: "ha.local:8123", path: "/api/websocket"), as: UTF8.self)
        #expect(request.hasPrefix("GET /api/websocket HTTP/1.1\r\nHost: ha.local:8123\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Version: 13\r\n") && request.hasSuffix("\r\n\r\n"))
    }

    @Test func anUpgradeIsTakenHoweverItArrivesAndWhatFollowsIsKept() {
        let bytes = Self.answer(headers: ["server: Python/3.14 aiohttp/3.13", "UPGRADE: WebSocket", "connection: keep-alive, upgrade",
                                          "sec-websocket-accept:s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]) + [0x81, 0x00]
        // Cut anywhere in the head: what follows the blank line comes out as the frames' first bytes.
        for cut in 1..<bytes.count - 2 {
            #expect(Self.read(bytes, cuts: [cut]) == .upgraded(rest: [0x81, 0x00]), "cut at \(cut)")
        }
    }

    @Test(arguments: [
        (answer(status: "404 Not Found", headers: []), #"the server answered the WebSocket upgrade with HTTP "404 Not Found", not 101"#),
        (answer(status: "401 \u{1b}[31mno\r", headers: []), #"the server answered the WebSocket upgrade with HTTP "401 \u001b[31mno\u000d", not 101"#),
        (answer(headers: ["Connection: Upgrade", "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]), "the server's 101 answer has Upgrade: none, not websocket"),
        (answer(headers: ["Upgrade: websocket", "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]), "the server's 101 answer has Connection: none, not upgrade"),
        (answer(headers: ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: AAAA"]), #"the server's 101 answer has the wrong Sec-WebSocket-Accept ("AAAA")"#),
        (answer(headers: good + ["Sec-WebSocket-Extensions: permessage-deflate"]), #"the server's 101 answer agrees to extensions not asked for ("permessage-deflate")"#),
        (Array("SSH-2.0-OpenSSH_9.2\r\n\r\n".utf8), #"the server did not answer the WebSocket upgrade in HTTP ("SSH-2.0-OpenSSH_9.2")"#),
    ])
    func anAnswerThatIsNotAnUpgradeIsRefusedSayingWhatCame(bytes: [UInt8], why: String) {
        #expect(Self.read(bytes) == .refused(why))
    }

    @Test func anAnswerWithoutAnEndIsRefusedAtItsBound() {
        let endless = Array("HTTP/1.1 101 Switching Protocols\r\n".utf8) + [UInt8](repeating: 0x61, count: WebSocketHandshake.maximumResponseSize)
        #expect(Self.read(endless) == .refused("the server's answer to the WebSocket upgrade has no end of headers in its first 16384 bytes"))
        #expect(Self.read(Array(endless.prefix(1000))) == .incomplete)
    }
}
