import Foundation
import JSON
import ProcessMeasurement
import Rules
import Testing

/// The template corpora against Home Assistant's answers recorded by `make e2e` (Tests/e2e/template-results.json):
/// `livebridge template` on the same states, at the same now(), in the same time zone.
/// - docs/template-examples.yaml: the same text for every template not marked as a known difference, and a marked one
///   that now matches must lose its mark.
/// - Tests/e2e/user-templates.yaml, templates as users wrote them: marked by nobody; the number rendered the same may
///   only go up (`userFloor`), and every template has its recorded answer.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct TemplateCorpusTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// How many of the user corpus's templates LiveBridge renders as Home Assistant did (both refusing counts), offline;
    /// raise it when the engine renders more the same, never lower it.
    static let userFloor = 610
    /// The same for the corpus's templates from Home Assistant core's own template tests.
    static let coreTestsFloor = 154

    struct Entry {
        let template: String
        let known: Bool
        var source = ""
        /// One of Home Assistant core's own template tests.
        var isCoreTest: Bool { source.contains("home-assistant/core/") && source.contains("/tests/") }
    }

    func corpus(_ path: String) throws -> [Entry] {
        var loader = YAMLLoader(environment: [:])
        let (root, errors) = loader.load(file: Self.repository.appendingPathComponent(path).path)
        #expect(errors.isEmpty, "\(errors)")
        guard case .mapping(let top)? = root?.kind, case .sequence(let items)? = top.first(where: { $0.key.scalar == "templates" })?.value.kind else {
            throw TestFailure("\(path) has no templates")
        }
        return items.compactMap { item in
            guard case .mapping(let fields) = item.kind, let template = fields.first(where: { $0.key.scalar == "template" })?.value.scalar else { return nil }
            return Entry(template: template, known: fields.contains { $0.key.scalar == "refused" || $0.key.scalar == "differs" },
                         source: fields.first(where: { $0.key.scalar == "source" })?.value.scalar ?? "")
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Home Assistant's recorded run: the examples' at the top, the user corpus's under "user".
    func recorded() throws -> JSONValue {
        try JSONParser.parse(Array(try Data(contentsOf: Self.repository.appendingPathComponent("Tests/e2e/template-results.json"))))
    }

    /// LiveBridge's answers, in the order of `templates`, on `states` at `now` in `zone`.
    func render(_ templates: [String], states: JSONValue, now: String, zone: String) async throws -> [JSONValue?] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-corpus-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try states.jsonText.write(toFile: folder + "/states.json", atomically: true, encoding: .utf8)
        var input = ""
        for (index, template) in templates.enumerated() { input += JSONValue.object(["id": .int(index), "template": .string(template)]).jsonText + "\n" }
        try input.write(toFile: folder + "/requests.jsonl", atomically: true, encoding: .utf8)
        let livebridge = try URL(fileURLWithPath: FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("livebridge").path
        // The zone the answers were recorded in; the rest inherited (a sanitizer's options among them).
        let process = try ChildProcess(livebridge, ["template", "--states", folder + "/states.json", "--at", now],
                                       environment: ProcessInfo.processInfo.environment.merging(["TZ": zone]) { _, zone in zone },
                                       standardInput: .file(folder + "/requests.jsonl"), standardOutput: .pipe)
        // Past the suite's minute the test has failed; the process is then killed so that the test ends too.
        let (data, status) = await Self.output(of: process, limit: .seconds(90))
        #expect(status == 0, "livebridge template: status \(status) (9: killed after 90 s)")
        var ours: [Int: JSONValue] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let answer = try JSONParser.parse(String(line))
            if let id = answer["id"]?.intValue { ours[id] = answer }
        }
        return templates.indices.map { ours[$0] }
    }

    /// Runs `process` to its end and returns what it wrote to stdout. The blocking reads happen on a thread of their
    /// own, not on one of the test pool's (on a 2-core machine, half the pool held for the corpus's 10-30 s under a
    /// sanitizer, and for ever if the process hung), and the process is killed after `limit`.
    static func output(of process: ChildProcess, limit: Duration) async -> (Data, Int32) {
        let watchdog = Task {
            try await Task.sleep(for: limit)
            process.signal(SIGKILL)
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let output = process.collect().output
                continuation.resume(returning: (Data(output), process.wait()))
            }
        }
    }

    /// What only Home Assistant can render has no text offline: make e2e asks the real one for it.
    static func renderedByHomeAssistant(_ answer: JSONValue?) -> Bool {
        answer?["error"]?.stringValue?.hasPrefix("failed: rendered by Home Assistant (") == true
    }

    @Test func everyUnmarkedTemplateRendersAsHomeAssistantDid() async throws {
        let entries = try corpus("docs/template-examples.yaml")
        let recorded = try recorded()
        let now = try #require(recorded["now"]?.stringValue)
        let zone = try #require(recorded["time_zone"]?.stringValue)
        let ours = try await render(entries.map(\.template), states: recorded["states"] ?? .array([]), now: now, zone: zone)
        var same = 0, renderedByHomeAssistant = 0
        for (entry, mine) in zip(entries, ours) {
            let theirs = try #require(recorded["results"]?[entry.template], "no recorded answer for \(entry.template): run make e2e")
            if Self.renderedByHomeAssistant(mine) { renderedByHomeAssistant += 1; continue }
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

    @Test func userTemplatesRenderAsHomeAssistantDidAtLeastAsOftenAsBefore() async throws {
        let entries = try corpus("Tests/e2e/user-templates.yaml")
        #expect(!entries.contains { $0.known }, "the user corpus is marked by nobody: its differences are measured")
        let recorded = try recorded()
        let user = try #require(recorded["user"], "no recorded answers for the user corpus: run make e2e")
        let now = try #require(user["now"]?.stringValue)
        let zone = try #require(recorded["time_zone"]?.stringValue)
        let states = user["states"] ?? .array([])
        var ours = try await render(entries.map(\.template), states: states, now: now, zone: zone)
        // Home Assistant rendered each template at its own moment (`at`), a few seconds into the run: one reading the
        // clock against a state's last_changed differs at the run's start, so such a template, when it differs, is
        // rendered again at its moment.
        let clockReaders = ["now()", "utcnow()", "relative_time", "time_since", "time_until", "today_at", "last_changed", "last_updated", "last_reported"]
        for (index, entry) in entries.enumerated() {
            guard clockReaders.contains(where: { entry.template.contains($0) }), let theirs = user["results"]?[entry.template],
                  let at = user["at"]?[entry.template]?.stringValue, theirs["result"] != nil, theirs["result"] != ours[index]?["result"],
                  !Self.renderedByHomeAssistant(ours[index]) else { continue }
            ours[index] = try await render([entry.template], states: states, now: at, zone: zone)[0]
        }
        var same = 0, bothRefuse = 0, renderedByHomeAssistant = 0, different = 0, coreTests = 0, coreTestsSame = 0
        for (entry, mine) in zip(entries, ours) {
            let theirs = try #require(user["results"]?[entry.template], "no recorded answer for \(entry.template): run make e2e")
            if entry.isCoreTest { coreTests += 1 }
            if Self.renderedByHomeAssistant(mine) {
                renderedByHomeAssistant += 1
            } else if theirs["result"] != nil && theirs["result"] == mine?["result"] {
                same += 1
                if entry.isCoreTest { coreTestsSame += 1 }
            } else if theirs["error"] != nil && mine?["error"] != nil {
                same += 1
                bothRefuse += 1
                if entry.isCoreTest { coreTestsSame += 1 }
            } else {
                different += 1
            }
        }
        let percent = 100 * same / max(entries.count, 1)
        print("user templates: \(same) of \(entries.count) the same as Home Assistant (\(percent)%), \(bothRefuse) of them refused by both, "
            + "\(renderedByHomeAssistant) rendered by Home Assistant (no text offline), \(different) different "
            + "(Tests/e2e/user-templates-differences.txt lists them); of core's own template tests \(coreTestsSame) of \(coreTests)")
        #expect(entries.count >= 600, "the user corpus holds at least 600 templates")
        #expect(same >= Self.userFloor, "the number the same may only go up: \(same) of \(entries.count), the floor is \(Self.userFloor)")
        #expect(coreTestsSame >= Self.coreTestsFloor, "core's own template tests: \(coreTestsSame) of \(coreTests), the floor is \(Self.coreTestsFloor)")
    }
}
