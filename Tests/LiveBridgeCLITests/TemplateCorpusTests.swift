import Foundation
import JSON
import Rules
import Testing

/// docs/template-examples.yaml against Home Assistant's answers recorded by `make e2e` (Tests/e2e/template-results.json):
/// `livebridge template` on the same states, at the same now(), in the same time zone, gives the same text for every
/// template not marked as a known difference, and a marked one that now matches must lose its mark.
@Suite(.timeLimit(.minutes(1)))
struct TemplateCorpusTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Entry {
        let template: String
        let known: Bool
    }

    func corpus() throws -> [Entry] {
        var loader = YAMLLoader(environment: [:])
        let (root, errors) = loader.load(file: Self.repository.appendingPathComponent("docs/template-examples.yaml").path)
        #expect(errors.isEmpty, "\(errors)")
        guard case .mapping(let top)? = root?.kind, case .sequence(let items)? = top.first(where: { $0.key.scalar == "templates" })?.value.kind else {
            throw TestFailure("docs/template-examples.yaml has no templates")
        }
        return items.compactMap { item in
            guard case .mapping(let fields) = item.kind, let template = fields.first(where: { $0.key.scalar == "template" })?.value.scalar else { return nil }
            return Entry(template: template, known: fields.contains { $0.key.scalar == "refused" || $0.key.scalar == "differs" })
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    @Test func everyUnmarkedTemplateRendersAsHomeAssistantDid() async throws {
        let entries = try corpus()
        let recorded = try JSONParser.parse(Array(try Data(contentsOf: Self.repository.appendingPathComponent("Tests/e2e/template-results.json"))))
        let now = try #require(recorded["now"]?.stringValue)
        let zone = try #require(recorded["time_zone"]?.stringValue)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-corpus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try (recorded["states"] ?? .array([])).jsonText.write(toFile: folder + "/states.json", atomically: true, encoding: .utf8)
        var input = ""
        for (index, entry) in entries.enumerated() { input += JSONValue.object(["id": .int(index), "template": .string(entry.template)]).jsonText + "\n" }
        try input.write(toFile: folder + "/requests.jsonl", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("livebridge")
        process.arguments = ["template", "--states", folder + "/states.json", "--at", now]
        // The zone the answers were recorded in; the rest inherited (a sanitizer's options among them).
        process.environment = ProcessInfo.processInfo.environment.merging(["TZ": zone]) { _, zone in zone }
        process.standardInput = FileHandle(forReadingAtPath: folder + "/requests.jsonl")
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        var ours: [Int: JSONValue] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let answer = try JSONParser.parse(String(line))
            if let id = answer["id"]?.intValue { ours[id] = answer }
        }
        var same = 0, renderedByHomeAssistant = 0
        for (index, entry) in entries.enumerated() {
            let theirs = try #require(recorded["results"]?[entry.template], "no recorded answer for \(entry.template): run make e2e")
            let mine = ours[index]
            // What only Home Assistant can render has no text offline: make e2e asks the real one for it.
            if mine?["error"]?.stringValue?.hasPrefix("failed: rendered by Home Assistant (") == true { renderedByHomeAssistant += 1; continue }
            let equal = theirs["result"] != nil && theirs["result"] == mine?["result"]
            let bothRefuse = theirs["error"] != nil && mine?["error"] != nil
            if equal || bothRefuse { same += 1 }
            if entry.known {
                #expect(!equal, "now the same as Home Assistant, remove its mark: \(entry.template)")
            } else {
                #expect(equal || bothRefuse, "\(entry.template): Home Assistant \(theirs.jsonText), LiveBridge \(mine?.jsonText ?? "nothing")")
            }
        }
        #expect(entries.count >= 300, "the corpus holds at least 300 templates")
        #expect(same >= 325, "the score may only go up: \(same) of \(entries.count)")
        #expect(renderedByHomeAssistant == 3, "the registry templates of the corpus, which only Home Assistant renders")
    }
}
