import Foundation
import FuzzTargets
import Testing

/// Every input the fuzzers keep (Tests/Fuzz/corpus/TARGET) and every finding (Tests/Fuzz/findings/TARGET), run
/// through its target: a crash found once stays fixed.
struct FuzzCorpusTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ target: FuzzTarget, _ folder: String) -> [URL] {
        let directory = fuzz.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func theKeptCorpusRunsClean(target: FuzzTarget) throws {
        let files = Self.inputs(target, "corpus") + Self.inputs(target, "findings")
        #expect(!files.isEmpty, "no corpus for \(target.rawValue): run make fuzz")
        for file in files { target.run(Array(try Data(contentsOf: file))) }
    }
}
