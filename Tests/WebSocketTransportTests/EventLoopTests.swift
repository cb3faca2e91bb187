import Glibc
import Synchronization
import Platform
import Testing
import WebSocketTransport
import FoundationEssentials

/// The event loop's own contract: errors that name the port, work refused once stopped, confinement checked.
struct EventLoopTests {
    func listener(port: Int = 0) throws -> WebSocketEventLoop {
        var options = WebSocketEventLoop.Options()
        options.listen = ("127.0.0.1", port)
        options.usesTLS = false
        return try WebSocketEventLoop(options: options)
    }

    /// A listener on 127.0.0.1 is bound to loopback only (libwebsockets bound an IPv4 interface on its IPv6 socket to
    /// every address: the preview page and the status page were reachable from the network).
    @Test func aLoopbackListenerIsBoundToLoopbackOnly() throws {
        let loop = try listener()
        loop.start()
        defer { loop.shutdown() }
        let hex = String(loop.listenPort, radix: 16, uppercase: true)
        let port = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        /// The local addresses listening on the port: field 1 is "ADDR:PORT" in hex, state 0A is LISTEN.
        func listening(_ table: String) -> [String] {
            // Read to the end, a page at a time: /proc's tables say size 0, and a busy test run lists many sockets.
            var bytes: [UInt8] = []
            let fd = open(table, O_RDONLY)
            if fd >= 0 {
                defer { close(fd) }
                var page = [UInt8](repeating: 0, count: 4096)
                while case let n = read(fd, &page, page.count), n > 0 { bytes += page[..<n] }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            return text.split(separator: "\n").dropFirst().compactMap { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[3] == "0A" && fields[1].hasSuffix(":" + port) ? String(fields[1]) : nil
            }
        }
        #expect(listening("/proc/net/tcp") == ["0100007F:" + port])
        #expect(listening("/proc/net/tcp6").isEmpty, "no IPv6 (all-address) socket")
    }

    /// Used to free its buffers twice (init, then deinit) and abort; now an error saying which address and why.
    @Test func aPortInUseIsAnErrorNamingIt() throws {
        let first = try listener()
        first.start()
        defer { first.shutdown() }
        #expect(first.listenPort > 0)
        do {
            _ = try listener(port: first.listenPort)
            Issue.record("a second listener on \(first.listenPort) was created")
        } catch let error as TransportError {
            #expect(error.description == "cannot listen on 127.0.0.1:\(first.listenPort): already in use (another program, or another LiveBridge, has it)")
        }
    }

    /// libwebsockets reads a listen address it cannot parse as an interface's name and, finding none, makes its context
    /// with no listener: the daemon then ran without the status listener it logged. Now an error naming the address.
    @Test(arguments: [("localhost", 0), ("localhost", 9), (" 127.0.0.1", 0), ("no-such-interface-here", 9), ("192.0.2.1", 9)])
    func anAddressLibWebSocketsCannotListenOnIsAnErrorNamingIt(host: String, port: Int) throws {
        var options = WebSocketEventLoop.Options()
        options.listen = (host, port)
        options.usesTLS = false
        do {
            let loop = try WebSocketEventLoop(options: options)
            loop.shutdown()
            Issue.record("a listener on \(host) was made, port \(loop.listenPort)")
        } catch let error as TransportError {
            #expect(error.description.hasPrefix("cannot listen on \(host):\(port): "), "\(error)")
            if host == "localhost", port == 0 { #expect(error.description.hasSuffix("or an interface's name (lo, eth0), not a host name"), "\(error)") }
            if host == "192.0.2.1" { #expect(error.description.hasSuffix("that address is not one of this machine's"), "\(error)") }
        }
    }

    /// Room for no connection (a reviewer crashed libwebsockets with it), or for more than a process can have, is
    /// refused when the loop is made.
    @Test(arguments: [0, -1, (1 << 20) + 1, Int.max])
    func roomForNoConnectionIsAnError(maximum: Int) {
        var options = WebSocketEventLoop.Options()
        options.maximumConnections = maximum
        options.usesTLS = false
        #expect(throws: TransportError.self) { try WebSocketEventLoop(options: options) }
    }

    @Test func workHandedOverBeforeShutdownRunsAndWorkAfterIsRefused() async {
        let loop = try! listener()
        loop.start()
        let ran = Atomic<Int>(0)
        let onLoop = Atomic<Bool>(false)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let accepted = loop.perform {
                onLoop.store(loop.isInEventLoop, ordering: .relaxed)
                ran.add(1, ordering: .relaxed)
                done.resume()
            }
            #expect(accepted)
        }
        let wasOnLoop = onLoop.load(ordering: .relaxed)
        #expect(wasOnLoop)
        #expect(!loop.isInEventLoop)
        loop.shutdown()
        let accepted = loop.perform { ran.add(1, ordering: .relaxed) }
        #expect(!accepted, "refused at once, not queued to be dropped")
        let runs = ran.load(ordering: .relaxed)
        #expect(runs == 1)
        loop.shutdown()  // a second stop returns at once
    }

    /// A thread started after the loop's ended may get its id (glibc reuses a finished thread's descriptor): it is not
    /// the loop's thread, so a second shutdown from it returns instead of trapping (CI's TSan run trapped so, once).
    @Test func aThreadAfterTheLoopEndedIsNotTheLoops() async throws {
        for _ in 0..<8 {
            let loop = try listener()
            let loopID = Atomic<UInt>(0)
            loop.start()
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                _ = loop.perform { loopID.store(UInt(pthread_self()), ordering: .relaxed); done.resume() }
            }
            loop.shutdown()
            let seen = await withCheckedContinuation { (done: CheckedContinuation<(UInt, Bool), Never>) in
                DetachedThread.start(stackSize: 8 << 20) {
                    let inLoop = loop.isInEventLoop
                    loop.shutdown()
                    done.resume(returning: (UInt(pthread_self()), inLoop))
                }
            }
            #expect(!seen.1, "thread \(seen.0) (the loop's was \(loopID.load(ordering: .relaxed))) taken for the loop's")
        }
    }

    @Test func aLoopNeverStartedCanBeShutDownOrDropped() throws {
        let dropped = try listener()
        _ = dropped.listenPort
        let stopped = try listener()
        #expect(stopped.perform {}, "queued until the loop runs")
        stopped.shutdown()
        #expect(!stopped.perform {})
    }
}

/// A listener at its edges: bodies refused or capped, WebSocket upgrades refused when nothing takes them, idle and
/// slow sockets timed out without holding up the requests that complete.
struct ListenerEdgeTests {
    final class Listener {
        let loop: WebSocketEventLoop
        init(maximumRequestBody: Int = 0, idleTimeout: Duration = .seconds(1), maximumConnections: Int = 64, limits: ListenerLimits? = nil) throws {
            var options = WebSocketEventLoop.Options()
            options.listen = ("127.0.0.1", 0)
            options.usesTLS = false
            options.maximumConnections = maximumConnections
            options.listenerLimits = limits
            options.maximumRequestBody = maximumRequestBody
            options.idleTimeout = idleTimeout
            loop = try WebSocketEventLoop(options: options)
            loop.onHTTPRequest = { request, respond in
                respond(HTTPServerResponse(status: 200, json: #"{"path":"\#(request.path)","bytes":\#(request.body.count)}"#))
            }
            loop.start()
        }
        deinit { loop.shutdown() }
    }

    /// A blocking TCP client on 127.0.0.1, with a receive timeout.
    final class Socket {
        let fd: Int32
        /// `source`: the local address to connect from (any of 127/8), so a test can be several clients.
        init(port: Int, from source: String? = nil) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            if let source {
                var local = sockaddr_in()
                local.sin_family = sa_family_t(AF_INET)
                local.sin_addr.s_addr = inet_addr(source)
                let bound = withUnsafePointer(to: &local) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                guard bound == 0 else { throw TransportError("bind to \(source) failed") }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw TransportError("connect failed") }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        deinit { close(fd) }
        func send(_ text: String) { _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
        /// Everything until the peer closes or the timeout passes.
        func receiveAll() -> String {
            var out: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                out += buffer[0..<n]
            }
            return String(decoding: out, as: UTF8.self)
        }
        /// What arrives until it ends with `suffix`, the peer closes or the timeout passes.
        func receive(until suffix: String) -> String {
            var out: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: out, as: UTF8.self).hasSuffix(suffix) {
                let n = recv(fd, &buffer, buffer.count, 0)
                if n <= 0 { break }
                out += buffer[0..<n]
            }
            return String(decoding: out, as: UTF8.self)
        }

        /// Whether the peer closed the connection within the receive timeout.
        func closedByPeer() -> Bool {
            var byte: UInt8 = 0
            return recv(fd, &byte, 1, 0) == 0
        }
    }

    @Test func aBodyIsRefusedWhereNoneIsTaken() throws {
        let listener = try Listener()
        let client = try Socket(port: listener.loop.listenPort)
        client.send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        let answer = client.receiveAll()
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
        #expect(answer.hasSuffix(#"{"error":"this listener takes no request bodies"}"#))
    }

    @Test func aBodyOverTheCapIsRefusedAndOneUnderItIsRead() throws {
        let listener = try Listener(maximumRequestBody: 16)
        let big = try Socket(port: listener.loop.listenPort)
        big.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n" + String(repeating: "a", count: 17))
        #expect(big.receiveAll().hasSuffix(#"{"error":"the request body is over 16 bytes"}"#))
        let small = try Socket(port: listener.loop.listenPort)
        small.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\nConnection: close\r\n\r\n" + String(repeating: "a", count: 16))
        #expect(small.receiveAll().hasSuffix(#"{"path":"/x","bytes":16}"#))
    }

    @Test func aWebSocketUpgradeIsRefusedWhenNothingTakesIt() throws {
        let listener = try Listener()
        let client = try Socket(port: listener.loop.listenPort)
        client.send("GET /api/websocket HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: livebridge\r\n\r\n")
        let answer = client.receiveAll()
        #expect(!answer.contains("101 Switching Protocols"), "\(answer)")
    }

    /// Forty sockets dribbling headers (a slow-loris) hold no one up, and are closed once idle too long.
    @Test func slowSocketsDoNotBlockARequestAndAreTimedOut() throws {
        let listener = try Listener(idleTimeout: .seconds(1))
        let slow = try (0..<40).map { _ in try Socket(port: listener.loop.listenPort) }
        for socket in slow { socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n") }
        let client = try Socket(port: listener.loop.listenPort)
        client.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(client.receiveAll().hasSuffix(#"{"path":"/healthz","bytes":0}"#))
        #expect(slow.allSatisfy { $0.closedByPeer() }, "idle sockets closed after the idle timeout")
    }

    /// A thousand idle sockets once kept /healthz silent for 75 s: one address holds at most its share, the rest are
    /// closed at once, and another client is answered straight away.
    @Test func oneClientHoldsAtMostItsShareOfSockets() throws {
        let listener = try Listener(idleTimeout: .seconds(30), limits: ListenerLimits(perClient: 4, deadline: .seconds(30)))
        let idle = try (0..<12).map { _ in try Socket(port: listener.loop.listenPort, from: "127.0.0.2") }
        // The eight past four are closed at once; the four let in stay (a short window for those).
        let closed = idle.filter { socket in
            var pollFD = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            return poll(&pollFD, 1, 300) > 0 && socket.closedByPeer()
        }
        #expect(closed.count == 8, "the sockets past four from 127.0.0.2 are closed")
        let probe = try Socket(port: listener.loop.listenPort, from: "127.0.0.3")
        probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(probe.receiveAll().hasSuffix(#"{"path":"/healthz","bytes":0}"#))
    }

    /// Idle sockets from many addresses, each within its share, fill the listener; or one address floods it: the
    /// oldest idle socket makes room, and a health check, from anywhere, is answered at once.
    @Test func idleSocketsFromManyAddressesOrOneNeverStarveTheHealthCheck() throws {
        let listener = try Listener(idleTimeout: .seconds(30), maximumConnections: 16,
                                    limits: ListenerLimits(perClient: 4, deadline: .seconds(30), reserve: 2, reservedPaths: ["/healthz"]))
        var idle: [Socket] = []
        for address in 2...9 { for _ in 0..<4 { idle.append(try Socket(port: listener.loop.listenPort, from: "127.0.0.\(address)")) } }
        let probe = try Socket(port: listener.loop.listenPort)
        probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(probe.receiveAll().hasSuffix(#"{"path":"/healthz","bytes":0}"#))
        for _ in 0..<8 { idle.append(try Socket(port: listener.loop.listenPort, from: "127.0.0.10")) }
        let sameAddress = try Socket(port: listener.loop.listenPort, from: "127.0.0.10")
        sameAddress.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(sameAddress.receiveAll().hasSuffix(#"{"path":"/healthz","bytes":0}"#), "a flood from the probe's own address")
        _ = idle
    }

    /// A request dribbled in a byte at a time is closed at the deadline for a whole request, however busy it keeps.
    @Test func aRequestNotWholeByTheDeadlineIsClosed() throws {
        let listener = try Listener(idleTimeout: .seconds(30), limits: ListenerLimits(perClient: 8, deadline: .seconds(1)))
        let slow = try Socket(port: listener.loop.listenPort)
        let started = ContinuousClock.now
        var closed = false
        for byte in "GET /healthz HTTP/1.1\r\nHost: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" {
            slow.send(String(byte))
            var pollFD = pollfd(fd: slow.fd, events: Int16(POLLIN), revents: 0)
            if poll(&pollFD, 1, 200) > 0 { closed = slow.closedByPeer(); break }
        }
        #expect(closed, "still open while dribbling after \(ContinuousClock.now - started)")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// The last sockets serve the health check only: with the others taken, a probe is answered and a page is not.
    @Test func theLastSocketsAreKeptForTheHealthCheck() throws {
        let listener = try Listener(idleTimeout: .seconds(30), maximumConnections: 6,
                                    limits: ListenerLimits(perClient: 10, deadline: .seconds(30), reserve: 2, reservedPaths: ["/healthz"]))
        let taken = try (0..<4).map { _ in try Socket(port: listener.loop.listenPort, from: "127.0.0.2") }
        // Each is seen by the listener before the next connects: one request answered on a fifth socket says so.
        let page = try Socket(port: listener.loop.listenPort)
        page.send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(page.receiveAll().hasPrefix("HTTP/1.1 503"))
        let probe = try Socket(port: listener.loop.listenPort)
        probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(probe.receiveAll().hasSuffix(#"{"path":"/healthz","bytes":0}"#))
        _ = taken
    }

    /// The method reaches the handler as sent (OPTIONS was once taken for a GET and answered 200).
    @Test(arguments: ["OPTIONS", "PUT", "DELETE", "PATCH"])
    func theMethodIsPassedOnAsSent(method: String) throws {
        var options = WebSocketEventLoop.Options()
        options.listen = ("127.0.0.1", 0)
        options.usesTLS = false
        let loop = try WebSocketEventLoop(options: options)
        loop.onHTTPRequest = { request, respond in respond(HTTPServerResponse(status: 200, json: #"{"method":"\#(request.method)"}"#)) }
        loop.start()
        defer { loop.shutdown() }
        let client = try Socket(port: loop.listenPort)
        client.send("\(method) /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(client.receive(until: "}").hasSuffix(#"{"method":"\#(method)"}"#))
    }
}
