import Foundation
import Rules

/// A rules file written to a folder of its own and loaded as the daemon loads it (`RulesLoader`).
func loadRules(_ text: String) throws -> RulesFile {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-rules-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try text.write(toFile: folder + "/rules.yaml", atomically: true, encoding: .utf8)
    return try RulesLoader.load(file: folder + "/rules.yaml", environment: [:]).get()
}
