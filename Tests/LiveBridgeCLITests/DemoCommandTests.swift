import Foundation
import HTTPClient
import JSON
import Testing

/// `livebridge demo` serves the preview page and fills it with the simulated household's activities.
@Suite(.timeLimit(.minutes(1)))
struct DemoCommandTests {
    @Test func theDemoServesThePreviewPageWithLiveActivities() async throws {
        // Port 0: the demo takes a free port and names it (one found free beforehand may be taken by the time it listens).
        let demo = try Subprocess(["demo", "--port", "0", "--cycle", "10"])
        // Generous: the demo starts a simulator, three fakes and the daemon, which takes long on a loaded machine.
        let opening = "LiveBridge demo: open http://127.0.0.1:"
        let opened = await demo.stdout.wait(timeout: .seconds(30)) { $0.contains { $0.hasPrefix(opening) && $0.hasSuffix(" (Ctrl-C stops)") } }
        // The demo's own words when it did not start (under a sanitizer, its report).
        #expect(opened, "\(demo.stderr.lines.suffix(80).joined(separator: "\n"))")
        let line = try #require(demo.stdout.lines.first { $0.hasPrefix(opening) })
        let port = try #require(Int(line.dropFirst(opening.count).prefix { $0.isNumber }))
        #expect(port > 0)
        #expect(await demo.stderr.wait { lines in lines.filter { $0.contains("msg=push") && $0.contains("outcome=delivered") }.count >= 4 })
        #expect(await demo.stderr.wait { lines in
            ["target=ward", "target=smith"].allSatisfy { target in lines.contains { $0.contains("msg=push") && $0.contains(target) && $0.contains("outcome=delivered") } }
        }, "PushWard and ActivitySmith take their pushes too")
        let client = HTTPClient()
        let page = try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/"))
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.bodyText.contains("<title>LiveBridge preview</title>"))
        let state = try JSONParser.parse(try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/api/state")).body)
        let shown = Set(state["activities"]?.objectValue?.keys.map { $0 } ?? [])
        #expect(shown.isSuperset(of: ["aivi/washer", "aivi/ev", "activitysmith/washer", "pushward/ev"]), "\(shown)")
        #expect(state["activities"]?["aivi/ev"]?["payload"]?["content"]?["progress"]?["style"] == "segmented")
        #expect(state["activities"]?["aivi/ev"]?["svg"]?.stringValue?.hasPrefix("<svg xmlns=") == true)
        demo.signal(SIGTERM)
        #expect(await demo.exitStatus() == 0)
    }
}
