@testable import Dispatcher
import Platform
import HTTPClient
import Testing
import LiveActivity

/// A 429's `Retry-After` as hostile or careless servers send it: clamped, or ignored for the usual back-off.
struct RetryAfterTests {
    @Test(arguments: [
        ("30", Duration?.some(.seconds(30))), (" 2 ", .seconds(2)), ("0.05", .milliseconds(50)), ("0", .zero),
        ("1e300", .seconds(86_400)), ("99999999999999999999999", .seconds(86_400)), ("1e999", .seconds(86_400)),
        ("nan", nil), ("inf", nil), ("-1", nil), ("soon", nil), ("", nil), ("Wed, 21 Oct 2026 07:28:00 GMT", nil),
    ])
    func headerValue(header: String, expected: Duration?) {
        #expect(RetryPolicy.retryAfter(header) == expected)
    }

    @Test func aHugeRetryAfterWaitsAtMostTenTimesTheCap() {
        let report = HTTPOutcome.classify(.success(HTTPResponse(status: 429, headers: ["retry-after": "1e300"])), kind: .update)
        guard case .retry(let after) = report.outcome else { Issue.record("429 not retried: \(report.outcome)"); return }
        #expect(after == .seconds(86_400))
        #expect(RetryPolicy(maximum: .seconds(60)).delay(attempt: 0, random: 0.5, retryAfter: after) == .seconds(600))
    }

    @Test func aNaNRetryAfterFallsBackToTheBackOff() {
        let report = HTTPOutcome.classify(.success(HTTPResponse(status: 429, headers: ["retry-after": "nan"])), kind: .update)
        guard case .retry(let after) = report.outcome else { Issue.record("429 not retried: \(report.outcome)"); return }
        #expect(after == nil)
    }

    /// `429` with `Retry-After: 0` once made 7,855 requests in 10 s: the wait is never under the floor and grows.
    @Test func retryAfterZeroWaitsTheFloorAndTheBackOffStillGrows() {
        let policy = RetryPolicy(initial: .seconds(1), maximum: .seconds(60))
        let waits = (0..<5).map { policy.delay(attempt: $0, random: 0, retryAfter: .zero) }
        #expect(waits == [.seconds(1), .seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        #expect(policy.delay(attempt: 0, random: 0.99, retryAfter: .milliseconds(10)) >= .seconds(1))
    }

    @Test func aRetryAfterShorterThanTheBackOffDoesNotShortenIt() {
        let policy = RetryPolicy(initial: .seconds(1), maximum: .seconds(60))
        #expect(policy.delay(attempt: 4, random: 0, retryAfter: .seconds(2)) == .seconds(8))
        #expect(policy.delay(attempt: 0, random: 0, retryAfter: .seconds(30)) == .seconds(30))
    }

    /// Ten 429s with `Retry-After: 0` through a lane: ten tries spread over more than a minute, not ten at once.
    @Test func aLaneAnsweredRetryAfterZeroBacksOff() {
        var lane = ActivityLane(retry: RetryPolicy())
        let start = Moment.now
        lane.start(Push(.start, body: Array("s".utf8), isUrgent: true), at: start)
        var now = start
        var tries: [Duration] = []
        for _ in 0..<10 {
            guard case .send = lane.next(at: now) else { Issue.record("nothing sent at \(now - start)"); return }
            tries.append(now - start)
            lane.finished(.retry(after: .zero), at: now, random: 0)
            guard case .wait(let until?) = lane.next(at: now) else { Issue.record("no wait after a 429"); return }
            #expect(until - now >= .seconds(1))
            now = until
        }
        #expect(tries.last! > .seconds(60))
    }

    /// The jitter is drawn only for a retry (a draw is a system call, and most pushes are delivered): the lane
    /// evaluates its `random` for a 429, not for a delivery.
    @Test func theJitterIsDrawnOnlyForARetry() {
        var lane = ActivityLane(retry: RetryPolicy())
        let now = Moment.now
        lane.start(Push(.start, body: Array("s".utf8), isUrgent: true), at: now)
        var draws = 0
        func draw() -> Double { draws += 1; return 0.5 }
        guard case .send = lane.next(at: now) else { Issue.record("nothing sent"); return }
        lane.finished(.retry(after: .zero), at: now, random: draw())
        #expect(draws == 1)
        guard case .wait(let until?) = lane.next(at: now), case .send = lane.next(at: until) else { Issue.record("not sent again"); return }
        lane.finished(.delivered, at: until, random: draw())
        #expect(draws == 1)
    }
}
