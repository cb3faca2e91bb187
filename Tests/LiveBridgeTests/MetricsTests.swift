import Dispatcher
import Testing
@testable import LiveBridge

/// /metrics: pushes per backend and target, what the budgets held and renewed, and each device's relay.
struct MetricsTests {
    @Test func pushesAreCountedPerTargetAndTheBudgetsAreShown() {
        let metrics = Metrics()
        metrics.push(backend: "family", target: "family/notify.mobile_app_me", outcome: "delivered", seconds: 0.01, permanentFailure: nil)
        metrics.push(backend: "family", target: "family/notify.mobile_app_partner", outcome: "delivered", seconds: 0.01, permanentFailure: nil)
        metrics.push(backend: "family", target: "family/notify.mobile_app_me", outcome: "delivered", seconds: 0.01, permanentFailure: nil)
        let text = metrics.text(debounced: 0, deduplicated: 0, retries: 0, held: 4, renewals: 1,
                                relayRemaining: ["notify.mobile_app_partner": 499, "notify.mobile_app_me": 498])
        #expect(text.contains("livebridge_pushes_total{backend=\"family\",target=\"family/notify.mobile_app_me\",outcome=\"delivered\"} 2\n"))
        #expect(text.contains("livebridge_pushes_total{backend=\"family\",target=\"family/notify.mobile_app_partner\",outcome=\"delivered\"} 1\n"))
        #expect(text.contains("livebridge_held_total 4\n") && text.contains("livebridge_renewals_total 1\n"))
        #expect(text.contains("# TYPE livebridge_relay_pushes_remaining gauge\n"
                              + "livebridge_relay_pushes_remaining{device=\"notify.mobile_app_me\"} 498\n"
                              + "livebridge_relay_pushes_remaining{device=\"notify.mobile_app_partner\"} 499\n"))
        #expect(!Metrics().text(debounced: 0, deduplicated: 0, retries: 0).contains("livebridge_relay_pushes_remaining"), "no relayed device, no gauge")
        // Holds by the budget's reason, every reason shown (0 when none).
        let holds = Metrics().text(debounced: 0, deduplicated: 0, retries: 0, holds: ["max_per_hour": 3])
        #expect(holds.contains("livebridge_holds_total{reason=\"max_per_hour\"} 3\n") && holds.contains("livebridge_holds_total{reason=\"min_interval\"} 0\n"))
    }

    /// A backend refusing for good shows as failing until one of its own pushes is delivered (another's does not
    /// clear it); the counters are listed in the order of their labels, backend first.
    @Test func aFailingBackendIsClearedByItsOwnDeliveryAndCountersKeepTheirOrder() {
        let metrics = Metrics()
        metrics.push(backend: "b", target: "b", outcome: "rejected", seconds: 0.1, permanentFailure: .service("401"))
        #expect(metrics.failingBackends == ["b": "401"])
        metrics.push(backend: "a", target: "a", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        #expect(metrics.failingBackends == ["b": "401"], "another backend's delivery clears nothing")
        metrics.push(backend: "b", target: "b", outcome: "retry", seconds: 0.1, permanentFailure: nil)
        #expect(metrics.failingBackends == ["b": "401"], "a retry is not a delivery")
        metrics.push(backend: "b", target: "b", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        #expect(metrics.failingBackends.isEmpty)
        metrics.push(backend: "a-b", target: "a-b", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        metrics.push(backend: "a", target: "a/notify.x", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        let lines = metrics.text(debounced: 0, deduplicated: 0, retries: 0).split(separator: "\n").filter { $0.hasPrefix("livebridge_pushes_total{") }
        #expect(lines == [
            "livebridge_pushes_total{backend=\"a\",target=\"a\",outcome=\"delivered\"} 1",
            "livebridge_pushes_total{backend=\"a\",target=\"a/notify.x\",outcome=\"delivered\"} 1",
            "livebridge_pushes_total{backend=\"a-b\",target=\"a-b\",outcome=\"delivered\"} 1",
            "livebridge_pushes_total{backend=\"b\",target=\"b\",outcome=\"delivered\"} 1",
            "livebridge_pushes_total{backend=\"b\",target=\"b\",outcome=\"rejected\"} 1",
            "livebridge_pushes_total{backend=\"b\",target=\"b\",outcome=\"retry\"} 1",
        ])
    }

    /// Names come from the rules file: a quote, a backslash or a line end in one is escaped as Prometheus' text format
    /// asks (the text stays one sample a line), and two label sets that join to the same text are two counters,
    /// listed in the same order every time.
    @Test func labelValuesAreEscapedAndCountersKeptApart() {
        let metrics = Metrics()
        metrics.push(backend: "we\"ird\\\nname", target: "we\"ird\\\nname", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        metrics.push(backend: "a|b", target: "c", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        metrics.push(backend: "a", target: "b|c", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        metrics.push(backend: "cr\r\nlf", target: "cr\r\nlf", outcome: "delivered", seconds: 0.1, permanentFailure: nil)
        let text = metrics.text(debounced: 0, deduplicated: 0, retries: 0, relayRemaining: ["notify.\"x": 3])
        #expect(text.contains("{backend=\"cr\r\\nlf\",target=\"cr\r\\nlf\",outcome=\"delivered\"} 1\n"), "a line end inside a \\r\\n too")
        #expect(text.contains("livebridge_pushes_total{backend=\"we\\\"ird\\\\\\nname\",target=\"we\\\"ird\\\\\\nname\",outcome=\"delivered\"} 1\n"))
        #expect(text.contains("livebridge_relay_pushes_remaining{device=\"notify.\\\"x\"} 3\n"))
        let pushes = text.split(separator: "\n").filter { $0.hasPrefix("livebridge_pushes_total{") }
        #expect(pushes.count == 4 && pushes.allSatisfy { $0.hasSuffix("} 1") })
        #expect(Array(pushes.prefix(2)) == ["livebridge_pushes_total{backend=\"a\",target=\"b|c\",outcome=\"delivered\"} 1",
                                            "livebridge_pushes_total{backend=\"a|b\",target=\"c\",outcome=\"delivered\"} 1"])
    }
}
