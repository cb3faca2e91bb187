import Foundation
import HTTPClient
import LiveActivity
import Testing
@testable import Dispatcher
@testable import FakePushServices
import JSON

/// Island Pulse's documented answers beyond the basics: a free-tier lock says when it lifts (`expiresAt`), and an ID
/// the app has not registered is a 404 DEVICE_NOT_REGISTERED that names the fix.
struct IslandPulseContractTests {
    func response(_ status: Int, _ body: String) -> Result<HTTPResponse, HTTPTransportError> {
        .success(HTTPResponse(status: status, body: Array(body.utf8)))
    }

    @Test func aLockWaitsUntilItsExpiresAt() {
        let now = 1_795_348_800.0  // 2026-11-22T12:00:00Z
        let iso = HTTPOutcome.classify(response(403, #"{"error":"FREE_TIER_JOB_LOCKED","expiresAt":"2026-11-22T12:30:00Z"}"#), kind: .start, service: IslandPulseSchema.definition, wallNow: now)
        #expect(iso.outcome == .locked(for: .seconds(1800)))
        let millis = HTTPOutcome.classify(response(403, #"{"error":"FREE_TIER_JOB_LOCKED","expiresAt":1795349400000}"#), kind: .start, service: IslandPulseSchema.definition, wallNow: now)
        #expect(millis.outcome == .locked(for: .seconds(600)))
        // Past, absurd or unreadable: at least a second, at most a day, or the usual long back-off.
        #expect(HTTPOutcome.classify(response(403, #"{"error":"FREE_TIER_JOB_LOCKED","expiresAt":"2020-01-01T00:00:00Z"}"#), kind: .start, service: IslandPulseSchema.definition, wallNow: now).outcome
                == .locked(for: .seconds(1)))
        #expect(HTTPOutcome.classify(response(403, #"{"error":"FREE_TIER_JOB_LOCKED","expiresAt":9e300}"#), kind: .start, service: IslandPulseSchema.definition, wallNow: now).outcome
                == .locked(for: .seconds(86_400)))
        #expect(HTTPOutcome.classify(response(403, #"{"error":"FREE_TIER_JOB_LOCKED","expiresAt":"soon"}"#), kind: .start, service: IslandPulseSchema.definition, wallNow: now).outcome
                == .locked(for: nil))
        #expect(HTTPOutcome.classify(response(403, #"{"error":"FREE_TIER_JOB_LOCKED"}"#), kind: .start, service: IslandPulseSchema.definition, wallNow: now).outcome == .locked(for: nil))
    }

    @Test func anUnregisteredIDIsRefusedWithTheFix() async throws {
        let service = try FakePushService(accounts: [FakeAccount(.islandpulse, "not-yet", plan: .unregistered)])
        let backend = HTTPPushBackend(name: "pulse", service: IslandPulseSchema.definition, baseURL: service.baseURL, token: "not-yet", client: HTTPClient())
        let report = await backend.deliver(BackendRequest(backend: "pulse", kind: .islandpulse, method: "POST", target: "/notify",
                                                          body: ["job_id": "j", "action": "start", "message": "m"]), kind: .start)
        #expect(report.status == 404)
        guard case .rejected(let code) = report.outcome else { Issue.record("not rejected: \(report)"); return }
        #expect(code.meaning == .notRegistered && code.explained.hasPrefix("DEVICE_NOT_REGISTERED: the app has not registered this ID yet"))
    }

    @Test func theFakesLockSaysWhenItLifts() async throws {
        let service = try FakePushService(accounts: [FakeAccount(.islandpulse, "pulse-test-id", plan: .freeTier)])
        let backend = HTTPPushBackend(name: "pulse", service: IslandPulseSchema.definition, baseURL: service.baseURL, token: "pulse-test-id", client: HTTPClient())
        func start(_ job: String) async -> DeliveryReport {
            await backend.deliver(BackendRequest(backend: "pulse", kind: .islandpulse, method: "POST", target: "/notify",
                                                 body: ["job_id": .string(job), "action": "start", "message": "m"]), kind: .start)
        }
        #expect(await start("first").outcome == .delivered)
        let locked = await start("second")
        guard case .locked(let wait?) = locked.outcome else { Issue.record("not locked with an expiry: \(locked)"); return }
        #expect(wait > .seconds(7 * 3600) && wait <= .seconds(8 * 3600))
    }
}
