import Foundation
import Testing

/// The naming habits DEVELOPERS.md states, checked over Sources/ rather than trusted.
struct NamingTests {
    static let sources = ModuleGraphTests.root.appendingPathComponent("Sources")

    /// Every Swift file under Sources/, with its text.
    static func swiftFiles() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        var files: [(String, String)] = []
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            files.append((path, try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The names of the types declared `… : Error, …` (conforming first or later in the list).
    static func errorTypes(in text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"(?:struct|enum|class) (\w+)\s*:[^{\n]*\bError\b"#)
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
    }

    @Test func everyErrorTypeIsNamedAnError() throws {
        var misnamed: [String] = []
        for (path, text) in try Self.swiftFiles() {
            for name in Self.errorTypes(in: text) where !name.hasSuffix("Error") && !name.hasSuffix("Errors") {
                misnamed.append("\(path): \(name)")
            }
        }
        #expect(misnamed == [], "error types end in Error (a list of them in Errors)")
    }

    @Test func theCheckFindsErrorTypesWhereverErrorIsListed() {
        #expect(Self.errorTypes(in: "public struct Held: Error, Sendable {\n struct ParseError: Equatable, Error {}") == ["Held", "ParseError"])
        #expect(Self.errorTypes(in: "struct Report: Sendable { let error: Error }").isEmpty)
    }
}
