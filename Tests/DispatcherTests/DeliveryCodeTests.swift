import Testing
@testable import Dispatcher

/// The typed codes the dispatcher and the daemon act on, read from what the services send.
struct DeliveryCodeTests {
    @Test(arguments: ["ACTIVITY_ALREADY_RUNNING", "FREE_TIER_JOB_LOCKED", "DEVICE_NOT_REGISTERED", "MISSING_UNIQUE_ID", "UNAUTHORIZED",
                      "quota.exceeded", "activity.not_found", "integration_key.slug_invalid", "activity.content_invalid"])
    func aServiceCodeIsSpeltBackAsSent(text: String) {
        #expect(DeliveryCode(service: text).description == text)
    }

    @Test func onlyWrongCredentialsAreForGoodAndOnlyAQuotaOrAnUnregisteredAppStopForAWhile() {
        let codes: [DeliveryCode] = [.activityAlreadyRunning, .freeTierJobLocked, .deviceNotRegistered, .missingUniqueID, .unauthorized,
                                     .quotaExceeded, .activityNotFound, .slugInvalid, .scopeMissing, .liveActivityLimit, .paused,
                                     .invalidTarget, .invalidService, .notConnected, .noRequest, .homeAssistant("not_found"), .disconnectedTakenAsSent, .timeout,
                                     .transport(7), .service("UNAUTHORIZED_ISH")]
        #expect(codes.filter(\.isPermanent) == [.missingUniqueID, .unauthorized])
        #expect(codes.filter { $0.limitReason != nil } == [.deviceNotRegistered, .quotaExceeded])
        #expect(DeliveryCode.slugInvalid.explained.hasPrefix("integration_key.slug_invalid: the key is restricted"))
        #expect(DeliveryCode.transport(7).explained == "curl 7")
    }
}
