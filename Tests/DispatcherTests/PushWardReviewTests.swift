import Foundation
import HTTPClient
import LiveActivity
import Testing
@testable import Dispatcher
@testable import FakePushServices
import JSON

/// What an independent review of issue 32 found in PushWard's handling, each against the fake built from its document.
struct PushWardReviewTests {
    func request(_ slug: String, _ kind: PushKind) -> BackendRequest {
        .pushWard(backend: "ward", slug: slug, kind: kind, content: ["template": "generic", "progress": 0.5], priority: nil, sound: nil,
                  creation: ["slug": .string(slug), "name": .string(slug)], dismissAfter: .zero)
    }

    /// A spent plan refuses the create as well (its document lists 429 quota.exceeded for POST): the start stops
    /// until the reset rather than retrying.
    @Test func aSpentQuotaOnTheCreateStops() async throws {
        let service = try FakePushService()
        service.limitPushWardUpdates(0)
        let backend = PushWardBackend(name: "ward", baseURL: service.baseURL, token: "pushward-test-key", client: HTTPClient())
        let first = await backend.deliver(request("w", .start), kind: .start)
        #expect(first.outcome == .rejected(PushWardBackend.code(.allowanceSpent)))
        let requests = service.requests.count
        let second = await backend.deliver(request("x", .start), kind: .start)
        #expect(second.outcome == .rejected(PushWardBackend.code(.allowanceSpent)))
        #expect(service.requests.count == requests, "stopped until the reset: nothing more was sent")
    }

    /// An end for an activity PushWard ended and deleted itself is done: it is not created again to be ended.
    @Test func anEndForAnActivityTheServerLetGoIsNotRevived() async throws {
        let service = try FakePushService()
        let backend = PushWardBackend(name: "ward", baseURL: service.baseURL, token: "pushward-test-key", client: HTTPClient())
        #expect(await backend.deliver(request("w", .start), kind: .start).outcome == .delivered)
        service.forgetPushWardActivity("w")
        let end = await backend.deliver(request("w", .end), kind: .end)
        #expect(end.outcome == .delivered)
        #expect(service.requests.last?.method == "PATCH", "no create after the 404")
        #expect(service.pushWardOngoing().isEmpty)
    }

    /// A 403 on create names its cause: a key restricted to other slugs is not a missing scope.
    @Test func aForbiddenCreateNamesItsCause() {
        let slug = PushWardBackend.forbidden(DeliveryReport(.rejected(PushWardBackend.code(.keyRestricted)), status: 403, code: PushWardBackend.code(.keyRestricted)))
        #expect(slug.outcome == .rejected(PushWardBackend.code(.keyRestricted)))
        let scope = PushWardBackend.forbidden(DeliveryReport(.rejected(.service("HTTP 403")), status: 403, code: nil))
        #expect(scope.outcome == .rejected(PushWardBackend.code(.permissionMissing)))
    }
}
