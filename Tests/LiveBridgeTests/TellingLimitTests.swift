import Testing
@testable import LiveBridge

/// Problems with automation events are told at most ten a minute; the rest are counted and said once.
struct TellingLimitTests {
    @Test func theFirstTenOfAMinuteAreToldAndTheRestCountedOnce() {
        var limit = TellingLimit()
        var told = 0
        for second in 0..<30 {
            let (tell, heldBack) = limit.admit(at: 1_000 + Double(second) / 10)
            if tell { told += 1 }
            #expect(heldBack == 0)
        }
        #expect(told == 10)
        // The next minute: told again, and the twenty held back are said with its first.
        let next = limit.admit(at: 1_060.5)
        #expect(next.tell && next.heldBackBefore == 20)
        #expect(limit.admit(at: 1_061).heldBackBefore == 0)
    }

    @Test func aClockSteppedBackStartsAWindow() {
        var limit = TellingLimit(perWindow: 1, window: 60)
        #expect(limit.admit(at: 500).tell)
        #expect(!limit.admit(at: 501).tell)
        let stepped = limit.admit(at: 100)
        #expect(stepped.tell && stepped.heldBackBefore == 1)
    }
}
