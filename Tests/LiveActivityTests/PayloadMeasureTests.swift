import LiveActivity
import Testing
import JSON

/// The bar and the timers of each backend's payload, measured apart from the rest: what `min_change` compares.
struct PayloadMeasureTests {
    let threshold = MinChange(progress: 0.05, eta: .seconds(180))

    func aivi(_ progress: Double, eta: String, state: String = "Washing") -> PayloadMeasure {
        PayloadMeasure(.aivi(backend: "aivi", slug: "washer", kind: .update, content: [
            "template": "progress", "progress": ["style": "simple", "value": .double(progress)], "header_left": .string(state),
            "header_right": ["value": .string(eta), "formatter": "time_until"],
        ]))
    }

    @Test func aiviBarsAndTimeUntilValues() {
        let shown = aivi(0.40, eta: "2026-11-25T12:00:00+00:00")
        #expect(shown.progress == 0.40 && shown.times == [1_795_608_000])
        #expect(!aivi(0.44, eta: "2026-11-25T12:02:00+00:00").matters(after: shown, threshold: threshold), "4 points, 2 minutes")
        #expect(aivi(0.45, eta: "2026-11-25T12:00:00+00:00").matters(after: shown, threshold: threshold), "5 points")
        #expect(aivi(0.40, eta: "2026-11-25T11:57:00+00:00").matters(after: shown, threshold: threshold), "3 minutes sooner")
        #expect(aivi(0.41, eta: "2026-11-25T12:00:00+00:00", state: "Rinsing").matters(after: shown, threshold: threshold), "the status changed")
    }

    @Test func islandPulseProgressIsAFractionOrAPercentage() {
        func pulse(_ progress: Int, _ message: String = "Copying") -> PayloadMeasure {
            PayloadMeasure(.islandPulse(backend: "pulse", body: ["job_id": "backup", "layout": "progress", "message": .string(message),
                                                                 "progress": .int(progress)]))
        }
        let fraction = PayloadMeasure(.islandPulse(backend: "pulse", body: ["job_id": "backup", "progress": 0.65]))
        #expect(fraction.progress == 0.65)
        #expect(pulse(40).progress == 0.4)
        #expect(!pulse(44).matters(after: pulse(40), threshold: threshold))
        #expect(pulse(45).matters(after: pulse(40), threshold: threshold))
        #expect(pulse(41, "Verifying").matters(after: pulse(40), threshold: threshold))
    }

    @Test func homeAssistantProgressOverItsMaximumAndWhen() {
        func live(_ progress: Int, when: Int) -> PayloadMeasure {
            PayloadMeasure(.homeAssistant(backend: "phone", service: "notify.mobile_app_phone", fields: [
                "tag": "washer", "message": "Washing", "progress": .int(progress), "progress_max": 200, "chronometer": true, "when": .int(when),
            ], kind: .update, dismissAfter: .zero, now: 0))
        }
        let shown = live(80, when: 1_000_000)
        #expect(shown.progress == 0.4 && shown.times == [1_000_000])
        #expect(!live(89, when: 1_000_120).matters(after: shown, threshold: threshold), "4.5 points, 2 minutes")
        #expect(live(90, when: 1_000_000).matters(after: shown, threshold: threshold))
        #expect(live(80, when: 1_000_200).matters(after: shown, threshold: threshold))
        #expect(!live(80, when: 1_000_000).matters(after: shown, threshold: MinChange(progress: 0, eta: .zero)), "nothing moved")
        #expect(live(81, when: 1_000_000).matters(after: shown, threshold: MinChange(progress: 0, eta: .zero)), "zero: any move")
    }
}
