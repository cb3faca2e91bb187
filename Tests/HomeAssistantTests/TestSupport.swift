import Platform
import Foundation
import HomeAssistant
import HomeAssistantSimulator
import Synchronization

/// The token tests use; asserted never to appear in anything the client reports.
let simulatorToken = "llat-test-9f3c2e71d4b8a6"

/// Connection events collected for assertions, with a way to wait for one.
final class EventLog: Sendable {
    private let state = Locked<(events: [ConnectionEvent], waiters: [(predicate: @Sendable ([ConnectionEvent]) -> Bool, continuation: CheckedContinuation<Bool, Never>)])>(([], []))

    var events: [ConnectionEvent] { state.withLock { $0.events } }
    var lines: [String] { events.map(\.description) }

    func record(_ event: ConnectionEvent) {
        let ready = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.events.append(event)
            let events = s.events
            var ready: [CheckedContinuation<Bool, Never>] = []
            s.waiters.removeAll { waiter in
                guard waiter.predicate(events) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// Waits until `predicate` holds over all events so far; false on timeout.
    func wait(timeout: Duration = .seconds(10), until predicate: @escaping @Sendable ([ConnectionEvent]) -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { s -> Bool in
                        if predicate(s.events) { return true }
                        s.waiters.append((predicate, continuation))
                        return false
                    }
                    if now { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next()!
            if !first {
                // Time out: release a waiter still pending so the group can finish.
                let pending = state.withLock { s in defer { s.waiters = [] }; return s.waiters.map(\.continuation) }
                for continuation in pending { continuation.resume(returning: false) }
            }
            group.cancelAll()
            return first
        }
    }

    func count(where predicate: (ConnectionEvent) -> Bool) -> Int { events.filter(predicate).count }
}

extension ConnectionEvent {
    var isReady: Bool { if case .ready = self { return true } else { return false } }
    var isDisconnected: Bool { if case .disconnected = self { return true } else { return false } }
    var isConnecting: Bool { if case .connecting = self { return true } else { return false } }
    var isRejected: Bool { if case .rejected = self { return true } else { return false } }
}

/// A connection to `simulator` with timings short enough for tests.
func makeConnection(to simulator: HomeAssistantSimulator, token: String = simulatorToken, log: EventLog,
                    configure: (inout ConnectionConfiguration) -> Void = { _ in }) throws -> HomeAssistantConnection {
    var configuration = try ConnectionConfiguration(url: simulator.url, token: AccessToken(token))
    configuration.reconnect = ReconnectPolicy(initial: .milliseconds(20), maximum: .milliseconds(200))
    configuration.startupPollInterval = .milliseconds(50)
    configuration.requestTimeout = .seconds(5)
    configure(&configuration)
    return try HomeAssistantConnection(configuration: configuration) { log.record($0) }
}

/// Collects changes from the feed until `predicate` holds for the latest state of each entity seen; nil on timeout.
func collect(from feed: EntityChangeFeed, timeout: Duration = .seconds(10),
             until predicate: @escaping @Sendable ([String: EntityChange]) -> Bool) async -> [String: EntityChange]? {
    await withTaskGroup(of: [String: EntityChange]?.self) { group in
        group.addTask {
            var latest: [String: EntityChange] = [:]
            while let batch = await feed.next() {
                for change in batch { latest[change.entityID] = change }
                if latest["__timeout__"] != nil { return nil }
                if predicate(latest) { return latest }
            }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next()!
        if first == nil { feed.publish([.removed(entityID: "__timeout__")]) }
        group.cancelAll()
        return first
    }
}

extension [String: EntityChange] {
    func state(_ id: String) -> String? {
        if case .updated(let s)? = self[id] { return s.state }
        return nil
    }
}
