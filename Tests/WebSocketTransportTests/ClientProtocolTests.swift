import Dispatch
import Glibc
import Platform
import Synchronization
import Testing
@testable import WebSocketTransport

/// The client's own protocol over a real loopback socket, against a server that says exactly what a test scripts:
/// the upgrade, pings, closes and frames a client must refuse.
@Suite(.serialized) struct ClientProtocolTests {
    /// A one-connection TCP server on 127.0.0.1 run by the test's script on a thread of its own; reads time out
    /// after 5 s so nothing hangs.
    final class ScriptedServer: @unchecked Sendable {
        let listener: Int32
        let port: Int
        private var connection: Int32 = -1
        private var buffered: [UInt8] = []

        init() throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(listener, 4) == 0 else { throw TransportError("cannot listen") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
            }
            self.listener = listener
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit {
            if connection >= 0 { close(connection) }
            close(listener)
        }

        func accept() {
            connection = Glibc.accept(listener, nil, nil)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }

        /// Reads until `count` bytes are buffered; nil when the peer closed or the read timed out first.
        func read(_ count: Int) -> [UInt8]? {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while buffered.count < count {
                let n = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return nil }
                buffered += chunk[..<n]
            }
            defer { buffered.removeFirst(count) }
            return Array(buffered[..<count])
        }

        /// The upgrade request's head, up to its blank line.
        func readRequest() -> String? {
            var head: [UInt8] = []
            while head.count < 4 || Array(head.suffix(4)) != Array("\r\n\r\n".utf8) {
                guard let byte = read(1) else { return nil }
                head += byte
            }
            return String(decoding: head, as: UTF8.self)
        }

        /// Answers the upgrade as a server should, with `extra` after the blank line.
        func upgrade(_ request: String, extra: [UInt8] = []) {
            let key = request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { String($0.dropFirst("sec-websocket-key:".count)).trimmingSpaces() } ?? ""
            send(Array(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: \(WebSocketHandshake.expectedAccept(for: key))\r\n\r\n").utf8) + extra)
        }

        /// A client's frame: opcode, whether masked, and the payload unmasked.
        func readFrame() -> (opcode: UInt8, masked: Bool, payload: [UInt8])? {
            guard let head = read(2) else { return nil }
            var length = Int(head[1] & 0x7F)
            if length == 126 { guard let l = read(2) else { return nil }; length = Int(l[0]) << 8 | Int(l[1]) }
            if length == 127 { guard let l = read(8) else { return nil }; length = l.reduce(0) { $0 << 8 | Int($1) } }
            let masked = head[1] & 0x80 != 0
            let key = masked ? read(4) ?? [0, 0, 0, 0] : [0, 0, 0, 0]
            guard let payload = read(length) else { return nil }
            return (head[0] & 0x0F, masked, payload.enumerated().map { $0.element ^ key[$0.offset & 3] })
        }

        func hangUp() { _ = shutdown(connection, Int32(SHUT_RDWR)) }

        /// Whether the peer closed the socket (a read sees its end) within the read timeout.
        func peerClosed() -> Bool { read(buffered.count + 1) == nil }
    }

    /// What a client connection saw.
    final class Recorder: WebSocketConnectionDelegate, @unchecked Sendable {
        let opened = Atomic<Int>(0)
        let messages = Locked<[[UInt8]]>([])
        let closed = Locked<CloseReason?>(nil)
        let done = DispatchSemaphore(value: 0)
        var onOpen: ((WebSocketConnection) -> Void)?
        func connectionDidOpen(_ connection: WebSocketConnection) {
            opened.add(1, ordering: .relaxed)
            onOpen?(connection)
        }
        func connection(_ connection: WebSocketConnection, didReceive message: [UInt8]) { messages.withLock { $0.append(message) } }
        func connection(_ connection: WebSocketConnection, didCloseWith reason: CloseReason) {
            closed.withLock { $0 = reason }
            done.signal()
        }
        func waitClosed() -> CloseReason? {
            guard done.wait(timeout: .now() + 10) == .success else { return nil }
            return closed.withLock { $0 }
        }
    }

    /// Connects a client to `server` and runs `script` as the server, on a thread of its own.
    func run(_ server: ScriptedServer, recorder: Recorder, script: @escaping @Sendable (ScriptedServer) -> Void) throws -> WebSocketEventLoop {
        var options = WebSocketEventLoop.Options()
        options.usesTLS = false
        options.maximumMessageSize = 1 << 16
        let loop = try WebSocketEventLoop(options: options)
        loop.start()
        let serverDone = DispatchSemaphore(value: 0)
        DetachedThread.start(name: "scripted-server", stackSize: 1 << 20) { script(server); serverDone.signal() }
        let endpoint = WebSocketEndpoint(host: "127.0.0.1", port: server.port, path: "/api/websocket")
        loop.perform { _ = loop.connect(to: endpoint, delegate: recorder) }
        _ = serverDone.wait(timeout: .now() + 15)
        return loop
    }

    /// Upgrades, sends `bytes` at once, and returns every frame the client sent back ("opcode payload") until it
    /// dropped the socket, with how the client's connection ended.
    func framesAnswering(_ bytes: [UInt8]) throws -> (frames: [String], reason: CloseReason?, messages: [[UInt8]]) {
        let server = try ScriptedServer()
        let recorder = Recorder()
        let seen = Locked<[String]>([])
        let loop = try run(server, recorder: recorder) { server in
            server.accept()
            guard let request = server.readRequest() else { return }
            server.upgrade(request)
            server.send(bytes)
            while let frame = server.readFrame() { seen.withLock { $0.append("\(frame.opcode) \(frame.payload)") } }
        }
        defer { loop.shutdown() }
        let reason = recorder.waitClosed()
        return (seen.withLock { $0 }, reason, recorder.messages.withLock { $0 })
    }

    @Test func pingsAreAnsweredMaskedAndAServerCloseIsAnsweredWithItsCode() throws {
        let server = try ScriptedServer()
        let recorder = Recorder()
        let seen = Locked<[String]>([])
        let loop = try run(server, recorder: recorder) { server in
            server.accept()
            guard let request = server.readRequest() else { return }
            let line = String(request.split(separator: "\r\n").first ?? "")
            seen.withLock { $0.append(line) }
            // The first message comes in the same write as the upgrade's answer, the second a byte at a time.
            server.upgrade(request, extra: WebSocketFrameReaderTests.frame(0x1, Array("one".utf8)))
            for byte in WebSocketFrameReaderTests.frame(0x1, Array("two".utf8)) { server.send([byte]) }
            server.send(WebSocketFrameReaderTests.frame(0x9, Array("are you there".utf8)))
            if let pong = server.readFrame() { seen.withLock { $0.append("pong \(pong.opcode) \(pong.masked) \(String(decoding: pong.payload, as: UTF8.self))") } }
            server.send(WebSocketFrameReaderTests.frame(0x8, [0x03, 0xE9] + Array("restarting".utf8)))
            if let close = server.readFrame() { seen.withLock { $0.append("close \(close.opcode) \(close.masked) \(close.payload)") } }
            seen.withLock { $0.append("socket closed: \(server.peerClosed())") }
        }
        defer { loop.shutdown() }
        #expect(recorder.waitClosed() == .closedByPeer(code: 1001, reason: "restarting"))
        #expect(recorder.closed.withLock { $0 }?.description == "connection closed by peer (code 1001: restarting)")
        #expect(recorder.messages.withLock { $0 } == [Array("one".utf8), Array("two".utf8)])
        #expect(seen.withLock { $0 } == ["GET /api/websocket HTTP/1.1", "pong 10 true are you there", "close 8 true [3, 233]", "socket closed: true"])
    }

    @Test func aLocalCloseGoesOutAfterQueuedMessagesAndEndsWithTheServersClose() throws {
        let server = try ScriptedServer()
        let recorder = Recorder()
        let big = String(repeating: "x", count: 300_000)
        recorder.onOpen = { connection in
            connection.send(big)
            connection.close(reason: "LiveBridge is stopping")
        }
        let seen = Locked<[String]>([])
        let loop = try run(server, recorder: recorder) { server in
            server.accept()
            guard let request = server.readRequest() else { return }
            server.upgrade(request)
            var text: [UInt8] = []
            while let frame = server.readFrame() {
                seen.withLock { $0.append("\(frame.opcode) \(frame.masked) \(frame.opcode == 8 ? String(decoding: frame.payload.dropFirst(2), as: UTF8.self) : String(frame.payload.count))") }
                if frame.opcode == 8 { break }
                text += frame.payload
            }
            seen.withLock { $0.append("whole: \(text.count == 300_000)") }
            server.send(WebSocketFrameReaderTests.frame(0x8, [0x03, 0xE8]))
        }
        defer { loop.shutdown() }
        #expect(recorder.waitClosed() == .closedLocally("LiveBridge is stopping"))
        // The message in fragments of 256 KiB, then the close with its reason.
        #expect(seen.withLock { $0 } == ["1 true 262144", "0 true 37856", "8 true LiveBridge is stopping", "whole: true"])
    }

    @Test(arguments: [
        (WebSocketFrameReaderTests.frame(0x1, Array("hi".utf8), mask: [9, 9, 9, 9]), CloseReason.protocolViolation("WebSocket protocol error: a masked frame from the server"), UInt16(1002)),
        (WebSocketFrameReaderTests.frame(0x1, [0xC0, 0x80]), .invalidUTF8(size: 2), 1007),
        (WebSocketFrameReaderTests.frame(0x2, [UInt8](repeating: 1, count: 70_000)), .messageTooLarge(size: 70_000, limit: 65_536), 1009),
    ])
    func aBadFrameFailsTheConnectionWithACloseSayingWhy(frame: [UInt8], reason: CloseReason, code: UInt16) throws {
        // What follows the bad frame (a message, a ping) is never read.
        let answered = try framesAnswering(WebSocketFrameReaderTests.frame(0x1, Array("fine".utf8)) + frame
                                           + WebSocketFrameReaderTests.frame(0x1, Array("after".utf8)) + WebSocketFrameReaderTests.frame(0x9, []))
        #expect(answered.reason == reason)
        #expect(answered.messages == [Array("fine".utf8)])
        #expect(answered.frames == ["8 \([UInt8(code >> 8), UInt8(code & 0xFF)])"])
    }

    /// A connection whose owner has gone (its weak delegate is nil) still reads and checks what arrives: a message is
    /// dropped, invalid UTF-8 still fails the connection with 1007.
    @Test func aConnectionWhoseOwnerHasGoneStillChecksWhatArrives() throws {
        let server = try ScriptedServer()
        let recorder = Recorder()
        recorder.onOpen = { $0.delegate = nil }
        let seen = Locked<[String]>([])
        let loop = try run(server, recorder: recorder) { server in
            server.accept()
            guard let request = server.readRequest() else { return }
            server.upgrade(request)
            server.send(WebSocketFrameReaderTests.frame(0x1, Array("fine".utf8)) + WebSocketFrameReaderTests.frame(0x1, [0xC0, 0x80]))
            while let frame = server.readFrame() { seen.withLock { $0.append("\(frame.opcode) \(frame.payload)") } }
        }
        defer { loop.shutdown() }
        #expect(recorder.opened.load(ordering: .relaxed) == 1)
        #expect(recorder.messages.withLock { $0 }.isEmpty)
        #expect(seen.withLock { $0 } == ["8 [3, 239]"])
    }

    @Test func nothingIsReadOrAnsweredAfterTheServersClose() throws {
        let answered = try framesAnswering(WebSocketFrameReaderTests.frame(0x8, [0x03, 0xE8] + Array("bye".utf8))
                                           + WebSocketFrameReaderTests.frame(0x1, Array("late".utf8)) + WebSocketFrameReaderTests.frame(0x9, Array("late".utf8)))
        #expect(answered.reason == .closedByPeer(code: 1000, reason: "bye"))
        #expect(answered.messages.isEmpty)
        #expect(answered.frames == ["8 [3, 232]"])
    }

    @Test func aBrokenFrameAfterTheServersCloseDoesNotTurnItIntoAFailure() throws {
        let answered = try framesAnswering(WebSocketFrameReaderTests.frame(0x8, [0x03, 0xE9] + Array("restarting".utf8)) + [0xC1, 0x00])
        #expect(answered.reason == .closedByPeer(code: 1001, reason: "restarting"))
        #expect(answered.frames == ["8 [3, 233]"])
    }

    @Test func afterItsOwnCloseTheClientAnswersNoPing() throws {
        let server = try ScriptedServer()
        let recorder = Recorder()
        recorder.onOpen = { $0.close(reason: "stopping") }
        let seen = Locked<[String]>([])
        let loop = try run(server, recorder: recorder) { server in
            server.accept()
            guard let request = server.readRequest() else { return }
            server.upgrade(request)
            guard let close = server.readFrame() else { return }
            seen.withLock { $0.append("\(close.opcode)") }
            // Pings after the client's close, then the server's own close: nothing more may come from the client.
            server.send(WebSocketFrameReaderTests.frame(0x9, Array("a".utf8)) + WebSocketFrameReaderTests.frame(0x9, Array("b".utf8))
                        + WebSocketFrameReaderTests.frame(0x8, [0x03, 0xE8]))
            while let frame = server.readFrame() { seen.withLock { $0.append("\(frame.opcode)") } }
        }
        defer { loop.shutdown() }
        #expect(recorder.waitClosed() == .closedLocally("stopping"))
        #expect(seen.withLock { $0 } == ["8"])
    }

    @Test(arguments: [
        ("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", #"connection failed: the server answered the WebSocket upgrade with HTTP "403 Forbidden", not 101"#),
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: nope\r\n\r\n",
         #"connection failed: the server's 101 answer has the wrong Sec-WebSocket-Accept ("nope")"#),
        ("HTTP/1.1 101 Switching", "connection failed: the connection closed before the WebSocket upgrade was answered"),
    ])
    func anUpgradeRefusedOrCutShortIsAFailedConnectionSayingWhy(answer: String, reason: String) throws {
        let server = try ScriptedServer()
        let recorder = Recorder()
        let loop = try run(server, recorder: recorder) { server in
            server.accept()
            guard server.readRequest() != nil else { return }
            server.send(Array(answer.utf8))
            if !answer.hasSuffix("\r\n\r\n") { server.hangUp() }
        }
        defer { loop.shutdown() }
        #expect(recorder.waitClosed()?.description == reason)
        #expect(recorder.opened.load(ordering: .relaxed) == 0)
    }
}
