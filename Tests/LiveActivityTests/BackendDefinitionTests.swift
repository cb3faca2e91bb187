import Testing
import LiveActivity

/// Each service's facts in one definition, registered once.
struct BackendDefinitionTests {
    @Test(arguments: BackendKind.allCases) func eachKindIsRegisteredWithItsOwnDefinition(kind: BackendKind) {
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
        #expect(BackendKind.allCases.filter { $0.definition.spendsRelay } == [.homeassistant])
        #expect(BackendKind.allCases.filter { $0.definition.defaultSettle > .zero } == [.homeassistant])
        #expect(BackendKind.allCases.filter { $0.definition.baseURL == nil } == [.homeassistant])
    }
}
