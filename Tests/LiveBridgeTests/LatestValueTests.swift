import Testing
@testable import LiveBridge

/// The newest of a value that changes now and then (the templates Home Assistant renders), for a follower.
struct LatestValueTests {
    @Test func aFollowerSeesTheNewestValueNotEachOne() async {
        let latest = LatestValue<[String]>()
        latest.set(["a"])
        latest.set(["b"])
        let first = await latest.next(after: 0)
        #expect(first?.0 == ["b"] && first?.1 == 2)
        let waiting = Task { await latest.next(after: 2) }
        latest.set(["c"])
        let second = await waiting.value
        #expect(second?.0 == ["c"] && second?.1 == 3)
    }

    @Test func aCancelledWaitEndsWithNothing() async {
        let latest = LatestValue<Int>()
        latest.set(1)
        let waiting = Task { await latest.next(after: 1) }
        waiting.cancel()
        #expect(await waiting.value == nil)
        // The value is still there for the next follower.
        #expect(await latest.next(after: 0)?.0 == 1)
    }
}

/// Set, wait and cancel interleaved many times: nothing hangs, each waiter ends.
struct LatestValueStressTests {
    @Test(.timeLimit(.minutes(1))) func setsAndCancelsInterleavedNeverHang() async {
        let value = LatestValue<Int>()
        for round in 0..<2000 {
            let seen = round
            let waiter = Task { await value.next(after: seen) }
            let setter = Task.detached { value.set(round + 1) }
            if round % 2 == 0 { waiter.cancel() }
            _ = await waiter.value
            await setter.value
        }
    }
}
