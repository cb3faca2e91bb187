import Synchronization
import Testing
import WebSocketTransport

/// The event loop's own contract: errors that name the port, work refused once stopped, confinement checked.
struct EventLoopTests {
    func listener(port: Int = 0) throws -> WebSocketEventLoop {
        var options = WebSocketEventLoop.Options()
        options.listen = ("127.0.0.1", port)
        options.usesTLS = false
        return try WebSocketEventLoop(options: options)
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

    @Test func aLoopNeverStartedCanBeShutDownOrDropped() throws {
        let dropped = try listener()
        _ = dropped.listenPort
        let stopped = try listener()
        #expect(stopped.perform {}, "queued until the loop runs")
        stopped.shutdown()
        #expect(!stopped.perform {})
    }
}
