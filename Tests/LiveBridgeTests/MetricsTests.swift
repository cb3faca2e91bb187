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
}
