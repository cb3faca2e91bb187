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

    /// The path check read by bytes gives what the scalar rule gives (segments of letters, digits, `_`, `-` after a
    /// leading `/`, at most 512 scalars), over random paths of slugs, slashes, dots, `@`, `?`, `%`, accents, emoji,
    /// controls and over-long runs.
    @Test func aPathIsJudgedAsTheScalarRuleJudgesIt() {
        func reference(_ target: String) -> Bool {
            func isSlug(_ c: Unicode.Scalar) -> Bool {
                ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
            }
            let segments = target.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false)
            return target.hasPrefix("/") && target.unicodeScalars.count <= 512
                && segments.dropFirst().allSatisfy { !$0.isEmpty && $0.allSatisfy(isSlug) }
        }
        let pieces = ["/", "/", "a", "Z", "9", "_", "-", "activity", ".", "..", "@", "?", "%2F", " ", "é", "😀", "\u{0}", "\n",
                      "#", "\\", String(repeating: "x", count: 250)]
        var generator = SystemRandomNumberGenerator()
        var paths = ["", "/", "//", "/a", "/a/", "/a//b", "a/b", "/activity/washer", "/" + String(repeating: "a", count: 511),
                     "/" + String(repeating: "a", count: 512), "/" + String(repeating: "é", count: 300)]
        for _ in 0..<5_000 {
            paths.append((0..<Int.random(in: 1...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
        for path in paths {
            #expect((BackendKind.pathProblem(path) == nil) == reference(path), "\(path.prefix(40)) (\(path.utf8.count) bytes)")
        }
    }
}
