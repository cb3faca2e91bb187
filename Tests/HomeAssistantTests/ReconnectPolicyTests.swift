import HomeAssistant
import Testing

struct ReconnectPolicyTests {
    let policy = ReconnectPolicy(initial: .seconds(1), maximum: .seconds(60))

    @Test func theCeilingDoublesPerAttemptUpToTheCap() {
        #expect((0...8).map { policy.ceiling(attempt: $0) }
                == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(policy.ceiling(attempt: 10_000) == .seconds(60))
    }

    @Test func jitterSpreadsTheDelayOverTheUpperHalfOfTheCeiling() {
        #expect(policy.delay(attempt: 3, random: 0) == .seconds(4))
        #expect(policy.delay(attempt: 3, random: 0.5) == .seconds(6))
        #expect(policy.delay(attempt: 3, random: 1) == .seconds(8))
        #expect(policy.delay(attempt: 20, random: 0.999) <= .seconds(60))
    }
}
