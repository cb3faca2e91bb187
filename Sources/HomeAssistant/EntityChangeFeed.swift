import Platform
import Synchronization

/// Entity changes handed from the connection's thread to one consumer, coalesced per entity while it is behind.
///
/// The reader of the socket never waits for the consumer: a consumer slower than the stream
/// gets the latest state of each entity that changed, in first-changed order, and memory is
/// bounded by the number of entities, not by how far behind it is. A consumer already waiting gets a published
/// batch as it is (one socket read's changes, in order).
public final class EntityChangeFeed: Sendable {
    private struct State {
        var latest: [String: EntityChange] = [:]
        var order: [String] = []
        /// Entities removed and then back while the consumer was behind: it gets the removal before the new state, so
        /// the entity comes back last in Home Assistant's order (templates iterate `states` in it), not in its old place.
        var removedFirst: Set<String> = []
        var waiter: UnsafeContinuation<[EntityChange]?, Never>?
        /// `wake` came while the consumer was not waiting: its next call returns at once.
        var woken = false
        var finished = false
        var coalesced = 0
    }

    private let state = Locked(State())

    public init() {}

    /// Adds changes; never blocks.
    public func publish(_ changes: [EntityChange]) {
        guard !changes.isEmpty else { return }
        let resume: (UnsafeContinuation<[EntityChange]?, Never>, [EntityChange])? = state.withLock { s in
            guard !s.finished else { return nil }
            if let waiter = s.waiter {
                // The consumer waits, so nothing is pending (it waits only then): the batch goes to it as it is, in
                // order (a later change of an entity after an earlier one), without the coalescing table, which is
                // for a consumer behind.
                s.waiter = nil
                return (waiter, changes)
            }
            for change in changes {
                let id = change.entityID
                guard let previous = s.latest.updateValue(change, forKey: id) else {
                    s.order.append(id)
                    continue
                }
                s.coalesced += 1
                if change.isRemoval {
                    s.removedFirst.remove(id)
                } else if previous.isRemoval {
                    s.removedFirst.insert(id)
                }
            }
            return nil
        }
        if let (waiter, batch) = resume { waiter.resume(returning: batch) }
    }

    /// The changes since the last call, waiting for at least one; nil once the feed is finished, or when the calling
    /// task is cancelled (even with changes waiting: they stay for a later consumer).
    /// One consumer at a time.
    /// Runs where its caller runs (`nonisolated(nonsending)`): the call itself takes no step off the consumer's actor
    /// (the cancellation handler's operation still steps off and back once: it is not isolated to its caller in Swift 6.3).
    nonisolated(nonsending) public func next() async -> [EntityChange]? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let ready: [EntityChange]?? = state.withLock { s in
                    if Task.isCancelled { return .some(nil) }
                    if !s.order.isEmpty || s.woken { return .some(Self.drain(&s)) }
                    if s.finished { return .some(nil) }
                    precondition(s.waiter == nil, "EntityChangeFeed has one consumer")
                    s.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            // The consumer was cancelled while waiting: it gets nil (the feed itself goes on).
            let waiter = state.withLock { s in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Hands the consumer a batch even with no change in it (at once if it waits, else its next call returns at once):
    /// a (re)connection's snapshot that changed nothing is still news to a consumer that counts snapshots.
    public func wake() {
        let waiter = state.withLock { s -> UnsafeContinuation<[EntityChange]?, Never>? in
            guard !s.finished else { return nil }
            guard let waiter = s.waiter else { s.woken = true; return nil }
            s.waiter = nil
            return waiter
        }
        waiter?.resume(returning: [])
    }

    /// Ends the feed: a waiting consumer gets nil.
    public func finish() {
        let waiter = state.withLock { s -> UnsafeContinuation<[EntityChange]?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.order.isEmpty ? s.waiter : nil
        }
        waiter?.resume(returning: nil)
    }

    /// Whether the consumer is waiting for changes now (for tests that hand it a batch while it waits).
    package var isAwaited: Bool { state.withLock { $0.waiter != nil } }

    /// Changes replaced by a newer one for the same entity before the consumer saw them.
    public var coalescedCount: Int { state.withLock { $0.coalesced } }

    /// Room kept between batches: a flood reuses it, while a snapshot's thousands of entries are handed back.
    static let keptCapacity = FreedMemory.largeBatch

    private static func drain(_ s: inout State) -> [EntityChange] {
        var batch: [EntityChange] = []
        batch.reserveCapacity(s.order.count + s.removedFirst.count)
        for id in s.order {
            if !s.removedFirst.isEmpty, s.removedFirst.contains(id) { batch.append(.removed(entityID: id)) }
            batch.append(s.latest[id]!)
        }
        s.removedFirst.removeAll()
        s.woken = false
        let keep = s.order.count <= keptCapacity
        s.order.removeAll(keepingCapacity: keep)
        s.latest.removeAll(keepingCapacity: keep)
        return batch
    }
}
