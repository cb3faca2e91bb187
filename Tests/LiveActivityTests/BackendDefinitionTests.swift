import Testing
@testable import LiveActivity

/// Each service's facts in one definition, registered once.
struct BackendDefinitionTests {
    @Test(arguments: BackendDefinition.builtIn.map(\.kind)) func eachKindIsRegisteredWithItsOwnDefinition(kind: BackendKind) {
        let definition = kind.definition
        #expect(definition.kind == kind)
        #expect(definition.configKeys.first == "type")
        #expect(definition.needsToken == definition.configKeys.contains("token"))
        #expect(!definition.templates.isEmpty && Set(definition.templates).count == definition.templates.count)
        if let path = definition.idPath {
            #expect(definition.targetProblem(path + "washer_1") == nil)
            #expect(definition.targetProblem(path + "../admin") != nil)
            #expect(definition.targetProblem("/other/washer_1") != nil)
        }
        #expect(definition.idProblem("washer_1") == nil, "a plain id is an id everywhere")
        #expect(definition.idProblem("a/b") != nil)
    }

    @Test func onlyHomeAssistantSpendsThePhonesRelayAndWaitsForItsToken() {
        // The services LiveBridge ships with (a test may register others beside them).
        let builtIn = BackendDefinition.builtIn
        #expect(builtIn.filter(\.spendsRelay).map(\.kind) == [.homeassistant])
        #expect(builtIn.filter { $0.defaultSettle > .zero }.map(\.kind) == [.homeassistant])
        #expect(builtIn.filter { $0.baseURL == nil }.map(\.kind) == [.homeassistant])
        #expect(BackendKind.allCases.prefix(5) == [.aivi, .islandpulse, .homeassistant, .pushward, .activitysmith])
    }
}
