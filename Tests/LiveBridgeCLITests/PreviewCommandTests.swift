import Foundation
import Testing

/// `livebridge preview` draws a payload file or a rule's payload to SVG or HTML.
@Suite(.timeLimit(.minutes(1)))
struct PreviewCommandTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-preview-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aPayloadFileBecomesAnSVG() async throws {
        let dir = try folder()
        try #"{"template":"generic","progress":0.35,"state":"In progress","icon":"washer","remaining_time":2120}"#
            .write(toFile: dir + "/payload.json", atomically: true, encoding: .utf8)
        let preview = try Subprocess(["preview", dir + "/payload.json", "--at", "2026-11-22T12:00:00Z", "--out", dir + "/out.svg"])
        #expect(await preview.exitStatus() == 0)
        let svg = try String(contentsOfFile: dir + "/out.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains(">In progress</text>") && svg.contains(">35:20 left</text>"))
    }

    @Test func aRuleFromTheExampleBecomesAnHTMLPage() async throws {
        let dir = try folder()
        let config = RulesCommandTests.repository.appendingPathComponent("config")
        try FileManager.default.copyItem(atPath: config.appendingPathComponent("livebridge.example.yaml").path, toPath: dir + "/livebridge.yaml")
        try FileManager.default.copyItem(atPath: config.appendingPathComponent("secrets.example.yaml").path, toPath: dir + "/secrets.yaml")
        let preview = try Subprocess(["preview", "--config", dir + "/livebridge.yaml", "--states", config.appendingPathComponent("states.example.json").path,
                                      "--activity", "ev", "--at", "2026-11-22T12:00:00Z", "--out", dir + "/ev.html"])
        #expect(await preview.exitStatus() == 0)
        let html = try String(contentsOfFile: dir + "/ev.html", encoding: .utf8)
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains(">3 min left</text>") && html.contains(">Standard</text>") && html.contains("url(#hatch)"))
        let live = try Subprocess(["preview", "--config", dir + "/livebridge.yaml", "--states", config.appendingPathComponent("states.example.json").path,
                                   "--activity", "dishwasher", "--out", dir + "/d.svg"])
        #expect(await live.exitStatus() == 2)
        #expect(live.stderr.lines.first?.contains("is a Home Assistant live update, drawn by the companion app") == true)
    }
}
