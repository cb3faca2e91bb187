@testable import HTTPClient
import LiveActivity
import Testing
@testable import Dispatcher

/// The typed codes the dispatcher and the daemon act on, read from what the services send: each service's own from its
/// definition, spelt back as sent.
struct DeliveryCodeTests {
    @Test(arguments: [("ACTIVITY_ALREADY_RUNNING", BackendKind.aivi), ("UNAUTHORIZED", .aivi), ("FREE_TIER_JOB_LOCKED", .islandpulse),
                      ("DEVICE_NOT_REGISTERED", .islandpulse), ("MISSING_UNIQUE_ID", .islandpulse), ("quota.exceeded", .pushward),
                      ("activity.not_found", .pushward), ("integration_key.slug_invalid", .pushward), ("activity.content_invalid", .pushward)])
    func aServiceCodeIsSpeltBackAsSent(text: String, kind: BackendKind) {
        let code = DeliveryCode(service: text, of: kind.definition)
        #expect(code.description == text)
        // Each is one its service documents and LiveBridge acts on, but for the last, which stays the service's words.
        #expect((code.meaning != nil) == (text != "activity.content_invalid"), "\(code)")
    }

    /// A service's code means something only at its own service: Aivi's words from another service are just words.
    @Test func aCodeIsKnownOnlyByItsOwnService() {
        #expect(DeliveryCode(service: "quota.exceeded", of: PushWardSchema.definition).meaning == .allowanceSpent)
        #expect(DeliveryCode(service: "quota.exceeded", of: AiviSchema.definition) == .service("quota.exceeded"))
        #expect(DeliveryCode(service: "FREE_TIER_JOB_LOCKED", of: nil) == .service("FREE_TIER_JOB_LOCKED"))
    }

    @Test func onlyWrongCredentialsAreForGoodAndOnlyAQuotaOrAnUnregisteredAppStopForAWhile() {
        let known = BackendDefinition.builtInServices.flatMap { $0.definition.codes.map(DeliveryCode.known) }
        let codes: [DeliveryCode] = known + [.invalidTarget, .invalidService, .notConnected, .noRequest, .homeAssistant("not_found"),
                                             .disconnectedTakenAsSent, .timeout, .transport(7), .service("UNAUTHORIZED_ISH")]
        #expect(codes.filter(\.isPermanent).map(\.description).sorted() == ["MISSING_UNIQUE_ID", "UNAUTHORIZED"])
        #expect(codes.filter { $0.limitReason != nil }.map(\.description).sorted() == ["DEVICE_NOT_REGISTERED", "quota.exceeded"])
        #expect(DeliveryCode(service: "integration_key.slug_invalid", of: PushWardSchema.definition).explained
                    .hasPrefix("integration_key.slug_invalid: the key is restricted"))
        #expect(DeliveryCode.transport(7).explained == "curl 7")
    }

    /// A transport failure keeps curl's number as its code (a metric's label) and says why in the push's log line:
    /// "curl 23" alone did not say the answer's headers were over their bound.
    @Test func aTransportFailureSaysWhyInTheLog() {
        let failure = HTTPTransportError(code: 23, message: "the answer's headers are over 65536 bytes; connection dropped", isTimeout: false)
        let code = HTTPOutcome.classify(.failure(failure), kind: .update).code
        #expect(code?.description == "curl 23")
        #expect(code?.logged == "curl 23: the answer's headers are over 65536 bytes; connection dropped")
        #expect(DeliveryCode.service("UNAUTHORIZED_ISH").logged == "UNAUTHORIZED_ISH")
    }
}
