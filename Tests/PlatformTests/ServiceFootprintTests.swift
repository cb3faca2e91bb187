import Foundation
import Testing

/// A service is one description and its parts, one file each: the source files whose code names a service (its
/// comments and text aside) are its schema and definition, its rendering, its transport (when plain HTTP is not
/// enough), its fake (with the contract generated from its published document), its preview drawing, and the one
/// registration line — at most six written by hand. The executable's commands, the fuzz targets and the benchmarks
/// use the services (the demo shows all five) and are not counted: a new service needs none of them.
/// Home Assistant's own Live Activities go further by design — the relay's budget, dismissals and preconditions are
/// Home Assistant features, not a backend's — and Aivi's templates are the vocabulary every rule may be written in.
struct ServiceFootprintTests {
    static let sources = ModuleGraphTests.root.appendingPathComponent("Sources")
    static let users: Set<String> = ["livebridge", "FuzzTargets", "LiveBridgeFuzz", "LiveBridgeBenchmark", "RulesBenchmark"]

    /// `Module/File.swift` of every source file whose code (comments and string literals taken out, but for one-word
    /// literals: a name compared in code) matches `name`.
    static func files(naming name: String) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: name)
        var found: Set<String> = []
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) where !users.contains(module) {
            guard let files = FileManager.default.enumerator(atPath: sources.appendingPathComponent(module).path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: sources.appendingPathComponent(module).appendingPathComponent(file), encoding: .utf8)
                let code = Self.code(text)
                if pattern.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil {
                    found.insert(module + "/" + (file as NSString).lastPathComponent)
                }
            }
        }
        return found
    }

    /// The text without comments and string literals (multi-line ones included), but for literals of one word.
    static func code(_ text: String) -> String {
        var out: [String] = []
        var inMultiline = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let quotes = line.components(separatedBy: "\"\"\"").count - 1
            if inMultiline || quotes > 0 {
                if quotes % 2 == 1 { inMultiline.toggle() }
                continue
            }
            var kept = ""
            var inString = false
            var escaped = false
            var literal = ""
            var previous: Character = " "
            for character in line {
                if inString {
                    if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" {
                        inString = false
                        // A literal that is one word is a name the code branches on (`type == "pushward"`): kept.
                        if !literal.isEmpty, literal.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) { kept += "\"\(literal)\"" }
                        continue
                    }
                    literal.append(character)
                    continue
                }
                if character == "\"" { inString = true; literal = ""; continue }
                if character == "/" && previous == "/" { kept.removeLast(); break }
                kept.append(character)
                previous = character
            }
            out.append(kept)
        }
        return out.joined(separator: "\n")
    }

    @Test(arguments: [
        ("pushward|PushWard|pushWard", ["LiveActivity/PushWardSchema.swift", "LiveActivity/BackendDefinition.swift",
                                        "Rules/PushWardRendering.swift", "Dispatcher/PushWardBackend.swift",
                                        "FakePushServices/FakePushWard.swift", "FakePushServices/PushWardContract.swift",
                                        "Preview/ActivityPresentation.swift"]),
        ("activitysmith|ActivitySmith|activitySmith", ["LiveActivity/ActivitySmithSchema.swift", "LiveActivity/BackendDefinition.swift",
                                                       "Rules/ActivitySmithRendering.swift", "Dispatcher/ActivitySmithBackend.swift",
                                                       "FakePushServices/FakeActivitySmith.swift", "FakePushServices/ActivitySmithContract.swift",
                                                       "Preview/ActivityPresentation.swift"]),
        ("islandpulse|IslandPulse|islandPulse|\\.pulse\\b", ["LiveActivity/IslandPulseSchema.swift", "LiveActivity/BackendDefinition.swift",
                                                            "Rules/IslandPulseRendering.swift", "FakePushServices/FakeIslandPulse.swift",
                                                            "Preview/ActivityPresentation.swift", "Preview/PreviewRenderer.swift"]),
    ])
    func aServiceIsNamedByItsOwnFilesAndOneRegistrationLine(name: String, expected: [String]) throws {
        let found = try Self.files(naming: name)
        #expect(found == Set(expected), "named outside its own files: \(found.subtracting(expected).sorted())")
        let handWritten = found.filter { !$0.hasSuffix("Contract.swift") }
        #expect(handWritten.count <= 6, "\(handWritten.sorted())")
    }

    /// The check itself: a service named in code elsewhere is found; in a comment or a string it is not.
    @Test func codeIsToldFromCommentsAndText() {
        #expect(Self.code("let a = .pushward // PushWard") == "let a = .pushward ")
        #expect(!Self.code("let s = \"PushWard \\\"x\\\"\"; f()").contains("PushWard"))
        #expect(Self.code("a\n\"\"\"\nPushWard\n\"\"\"\nb") == "a\nb")
        #expect(Self.code("if type == \"pushward\" { f(\"PushWard said no\") }") == "if type == \"pushward\" { f() }")
    }
}
