import HomeAssistant
import Testing

struct EntityChangeFeedTests {
    func state(_ id: String, _ value: String) -> EntityChange {
        .updated(EntityState(entityID: id, state: value, lastChanged: 0))
    }

    /// A snapshot that changed nothing still reaches a consumer counting snapshots: an empty batch, at once to one
    /// waiting, at its next call to one busy; with changes published after, they come in that batch.
    @Test func aWakeHandsOverAnEmptyBatchOnce() async {
        let feed = EntityChangeFeed()
        let waiting = Task { await feed.next() }
        while !feed.isAwaited { await Task.yield() }
        feed.wake()
        #expect(await waiting.value == [])
        feed.wake()
        #expect(await feed.next() == [], "woken while busy: the next call returns at once")
        feed.wake()
        feed.publish([state("a", "1")])
        #expect(await feed.next() == [state("a", "1")])
        let after = Task { await feed.next() }
        while !feed.isAwaited { await Task.yield() }
        feed.publish([state("b", "1")])
        #expect(await after.value == [state("b", "1")], "the wake was taken: no second empty batch")
        feed.finish()
        feed.wake()
        #expect(await feed.next() == nil)
    }

    @Test func changesNotYetReadAreCoalescedToTheLatestPerEntityInFirstChangedOrder() async {
        let feed = EntityChangeFeed()
        feed.publish([state("b", "1"), state("a", "1")])
        feed.publish([state("b", "2"), .removed(entityID: "a"), state("c", "1")])
        #expect(await feed.next() == [state("b", "2"), .removed(entityID: "a"), state("c", "1")])
        #expect(feed.coalescedCount == 2)
    }

    /// Removed and back while the consumer is behind: it sees the removal, then the new state (Home Assistant puts a
    /// re-added entity last in its order; taking only the update would keep the old place). Removed again: only that.
    @Test func anEntityRemovedAndBackWhileTheConsumerIsBehindIsReportedRemovedThenUpdated() async {
        let feed = EntityChangeFeed()
        feed.publish([state("a", "1"), state("b", "1")])
        feed.publish([.removed(entityID: "a")])
        feed.publish([state("a", "2"), state("c", "1")])
        #expect(await feed.next() == [.removed(entityID: "a"), state("a", "2"), state("b", "1"), state("c", "1")])
        feed.publish([.removed(entityID: "b"), state("b", "2"), .removed(entityID: "b")])
        #expect(await feed.next() == [.removed(entityID: "b")])
        feed.publish([state("c", "2")])
        #expect(await feed.next() == [state("c", "2")], "nothing left over from before")
    }

    @Test func aWaitingConsumerIsWokenByPublish() async {
        let feed = EntityChangeFeed()
        async let batch = feed.next()
        // Either order works: published before the wait, or while waiting.
        feed.publish([state("a", "1")])
        #expect(await batch == [state("a", "1")])
    }

    /// A consumer already waiting gets the batch as published, in order; what comes while it is busy is coalesced.
    @Test func aWaitingConsumerGetsTheBatchAsPublishedAndABusyOneTheLatest() async {
        let feed = EntityChangeFeed()
        async let batch = feed.next()
        while !feed.isAwaited { await Task.yield() }
        feed.publish([state("a", "1"), state("b", "1"), state("a", "2")])
        #expect(await batch == [state("a", "1"), state("b", "1"), state("a", "2")])
        #expect(feed.coalescedCount == 0)
        feed.publish([state("a", "3")])
        feed.publish([state("b", "2"), state("a", "4")])
        #expect(await feed.next() == [state("a", "4"), state("b", "2")])
        #expect(feed.coalescedCount == 1)
    }

    /// A consumer cancelled while it waits gets nil (the service stops by cancellation); the feed goes on.
    @Test func aCancelledConsumerGetsNilAndTheFeedGoesOn() async {
        let feed = EntityChangeFeed()
        let waiting = Task { await feed.next() }
        // Cancelled before or while it waits: nil either way.
        waiting.cancel()
        #expect(await waiting.value == nil)
        feed.publish([state("a", "1")])
        #expect(await feed.next() == [state("a", "1")])
    }

    /// A cancelled consumer gets nil even with changes waiting (a stopping service under a steady flow of changes
    /// would otherwise never stop taking them); the changes stay for the next consumer.
    @Test func aCancelledConsumerGetsNilEvenWithChangesWaiting() async {
        let feed = EntityChangeFeed()
        feed.publish([state("a", "1")])
        let cancelled = Task { () -> [EntityChange]? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await feed.next()
        }
        #expect(await cancelled.value == nil)
        #expect(await feed.next() == [state("a", "1")])
    }

    @Test func finishEndsTheFeedAfterWhatIsPending() async {
        let feed = EntityChangeFeed()
        feed.publish([state("a", "1")])
        feed.finish()
        #expect(await feed.next() == [state("a", "1")])
        #expect(await feed.next() == nil)
    }

    /// The feed coalesces ids as it coalesces states: removed and back, the removal first; back and removed again, the
    /// removal only; a change of a behind consumer, the id once, in first-changed order.
    @Test func theFeedCoalescesIDsAsItCoalescesStates() async {
        let feed = EntityChangeFeed()
        feed.publish([.changed(entityID: "a"), .changed(entityID: "b")])
        feed.publish([.removed(entityID: "a"), .changed(entityID: "b")])
        feed.publish([.changed(entityID: "a"), .changed(entityID: "c"), .changed(entityID: "a")])
        #expect(await feed.next() == [.removed(entityID: "a"), .changed(entityID: "a"), .changed(entityID: "b"), .changed(entityID: "c")])
        feed.publish([.removed(entityID: "b"), .changed(entityID: "b"), .removed(entityID: "b")])
        feed.publish([.removed(entityID: "c"), .changed(entityID: "c")])
        #expect(await feed.next() == [.removed(entityID: "b"), .removed(entityID: "c"), .changed(entityID: "c")])
        feed.publish([.changed(entityID: "d")])
        #expect(await feed.next() == [.changed(entityID: "d")], "nothing left over")
        #expect(feed.coalescedCount == 7)
    }
}
