@testable import Dispatcher
import HTTPClient
import Testing

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
}
