import Platform
import Synchronization
import Testing
@testable import LiveBridge

/// SIGTERM/SIGINT cancel the service (its graceful shutdown), a second one is the hard stop, SIGHUP reloads.
struct ServiceRunnerTests {
    /// A service that records what happens to it and shuts down when `release` is called after its cancellation.
    private actor RecordingService: Service {
        private(set) var reloads = 0
        private(set) var cancelled = false
        private var shutdown: CheckedContinuation<Void, Never>?
        private var cancelledWaiters: [CheckedContinuation<Void, Never>] = []
        let shutsDownAtOnce: Bool

        init(shutsDownAtOnce: Bool) { self.shutsDownAtOnce = shutsDownAtOnce }

        func run() async throws {
            await withTaskCancellationHandler {
                await withCheckedContinuation { shutdown = $0 }
            } onCancel: {
                Task { await self.wasCancelled() }
            }
        }

        private func wasCancelled() {
            cancelled = true
            for waiter in cancelledWaiters { waiter.resume() }
            cancelledWaiters = []
            if shutsDownAtOnce { release() }
        }

        func waitUntilCancelled() async {
            if cancelled { return }
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
        #expect(await service.cancelled)
        #expect(secondStops.load(ordering: .relaxed) == 0)
    }

    @Test func aSecondStopWhileShuttingDownIsTheHardStop() async throws {
        let service = RecordingService(shutsDownAtOnce: false)
        let (signals, send) = AsyncStream.makeStream(of: UnixSignal.self)
        let (hardStops, hardStop) = AsyncStream.makeStream(of: Void.self)
        let running = Task { try await ServiceRunner.run(service, signals: signals, onSecondStop: { hardStop.yield() }) }
        send.yield(.interrupt)
        await service.waitUntilCancelled()
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
        #expect(await service.cancelled)
    }
}
