@testable import Dispatcher
import HomeAssistant
import LiveActivity
@testable import LiveBridge
import Platform
@testable import Rules
import Testing

/// A service's allowance is counted where the service counts it, for the daemon's whole life: a PushWard backend a
/// reload adds shares the 200 a minute (and a spent monthly quota) with the one already on that address.
struct SharedAllowanceTests {
    func pushWard(_ name: String, baseURL: String) -> RulesFile.Backend {
        RulesFile.Backend(name: name, kind: .pushward, token: AccessToken("k"), baseURL: baseURL, freeTier: false,
                          services: [], location: SourceLocation(file: "r.yaml", line: 1, column: 1))
    }

    @Test func aBackendMadeAtAReloadSharesThePacerOfItsAddress() async throws {
        // The service's own way of making a reload's backends: a registry made per call would give two pacers.
        let (service, _, _) = try ServiceLifecycleTests().service(homeAssistant: "ws://127.0.0.1:9")
        let first = await service.backends(for: [pushWard("a", baseURL: "http://Ward.example:8080")])
        // SIGHUP: only the new backend is made, on the same address written otherwise.
        let added = await service.backends(for: [pushWard("b", baseURL: "http://ward.example:8080/")])
        let a = try #require((first.first as? PushWardBackend)?.sender.pacer)
        let b = try #require((added.first as? PushWardBackend)?.sender.pacer)
        #expect(a === b)
        #expect(a.window.withLock(\.limit) == 200)
        // The monthly quota's stop is the account's: a spent quota stops the reload's backend too.
        let spent = try #require(first.first as? PushWardBackend), later = try #require(added.first as? PushWardBackend)
        #expect(spent.quotaSpentUntil === later.quotaSpentUntil)
    }
}
