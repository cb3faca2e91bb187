import Platform
import Synchronization
import Testing
@testable import LiveBridge

/// SIGTERM/SIGINT ask for the service's graceful shutdown, a second one is the hard stop, SIGHUP reloads; the runner
/// cancelled cancels the service.
struct ServiceRunnerTests {
    /// A service that records what happens to it and, once asked to stop (its graceful shutdown, or cancelled),
    /// shuts down at once or when `release` is called.
    private actor RecordingService: Service {
        private(set) var reloads = 0
        private(set) var cancelled = false
        private(set) var askedToStop = false
        private var shutdown: CheckedContinuation<Void, Never>?
        private var cancelledWaiters: [CheckedContinuation<Void, Never>] = []
        let shutsDownAtOnce: Bool

        init(shutsDownAtOnce: Bool) { self.shutsDownAtOnce = shutsDownAtOnce }

        func run() async throws {
            await gracefulShutdown()
            askedToStop = true
            cancelled = Task.isCancelled
            for waiter in cancelledWaiters { waiter.resume() }
            cancelledWaiters = []
            if !shutsDownAtOnce { await withCheckedContinuation { shutdown = $0 } }
        }

        func waitUntilAskedToStop() async {
            if askedToStop { return }
            await withCheckedContinuation { cancelledWaiters.append($0) }
        }

        func release() {
            shutdown?.resume()
            shutdown = nil
        }

        func reload() async { reloads += 1 }
    }

    @Test func hangupReloadsAndTerminateShutsTheServiceDown() async throws {
        let service = RecordingService(shutsDownAtOnce: true)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let secondStops = Atomic(0)
        send.yield(.hangup)
        send.yield(.hangup)
        send.yield(.user1)
        send.yield(.terminate)
        try await ServiceRunner.run(service, signals: signals, onSecondStop: { secondStops.add(1, ordering: .relaxed) })
        #expect(await service.reloads == 2)
        #expect(await service.askedToStop)
        #expect(await !service.cancelled, "a graceful shutdown, not a cancellation")
        #expect(secondStops.load(ordering: .relaxed) == 0)
    }

    @Test func aSecondStopWhileShuttingDownIsTheHardStop() async throws {
        let service = RecordingService(shutsDownAtOnce: false)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let (hardStops, hardStop) = AsyncStream.makeStream(of: Void.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals, onSecondStop: { hardStop.yield() }) }
        send.yield(.interrupt)
        await service.waitUntilAskedToStop()
        send.yield(.terminate)
        // The second signal is acted on while the service is still shutting down.
        var stops = hardStops.makeAsyncIterator()
        #expect(await stops.next() != nil)
        await service.release()
        try await running.value
        hardStop.finish()
        #expect(await stops.next() == nil, "one hard stop, for the one second signal")
    }

    @Test func whatTheServiceThrowsComesBack() async {
        struct Broken: Service { func run() async throws { throw LiveBridgeService.TokenRejectedError() } }
        let (signals, _) = AsyncStream.makeStream(of: UnixSignal.self)
        await #expect(throws: LiveBridgeService.TokenRejectedError.self) { try await ServiceRunner.run(Broken(), signals: signals) }
    }

    /// The runner's own task cancelled (its caller going away) cancels the service, and the runner returns when the
    /// service has shut down: nothing it started outlives it.
    @Test func cancellingTheRunnerCancelsTheService() async throws {
        let service = RecordingService(shutsDownAtOnce: true)
        let (signals, _) = AsyncStream.makeStream(of: UnixSignal.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals, onSecondStop: {}) }
        running.cancel()
        try await running.value
        #expect(await service.askedToStop)
        #expect(await service.cancelled)
    }
}
