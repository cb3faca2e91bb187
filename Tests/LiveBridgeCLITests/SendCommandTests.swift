import FakePushServices
import Foundation
import JSON
import Testing

/// `livebridge send`: one real push to a fake service over HTTP, or the request shown with its token masked.
@Suite(.timeLimit(.minutes(1)))
struct SendCommandTests {
    static let states = #"[{"entity_id": "sensor.washer_progress", "state": "65", "attributes": {}}]"#

    func rules(baseURL: String) -> String {
        """
        backends:
          aivi: { type: aivi, token: aivi-test-token, base_url: \(baseURL) }
        activities:
          washer:
            active_when: "{{ true }}"
            template: progress
            progress: { style: simple, value: "{{ states('sensor.washer_progress') | float / 100 }}" }
            header_left: Washing
        """
    }

    func folder(_ files: [String: String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-send-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for (name, text) in files { try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8) }
        return path
    }

    @Test func sendsOnePushAndSaysHowItWent() async throws {
        let service = try FakePushService()
        let dir = try folder(["rules.yaml": rules(baseURL: service.baseURL), "states.json": Self.states])
        let send = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json", "--action", "start"])
        #expect(await send.exitStatus() == 0)
        #expect(send.stdout.lines == ["sent start of washer to aivi: HTTP 200"])
        let request = try #require(service.requests.first)
        #expect(request.method == "PATCH" && request.path == "/activity/washer")
        #expect(request.body?["state"] == "ONGOING")
        #expect(request.body?["content"]?["progress"] == ["style": "simple", "value": 0.65])
    }

    @Test func dryRunShowsTheRequestWithTheTokenMasked() async throws {
        let dir = try folder(["rules.yaml": rules(baseURL: "https://api.example.test"), "states.json": Self.states])
        let send = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json", "--dry-run"])
        #expect(await send.exitStatus() == 0)
        #expect(Array(send.stdout.lines.prefix(4)) == ["PATCH https://api.example.test/activity/washer", "Authorization: Token ****",
                                                       "Content-Type: application/json", ""])
        #expect(try JSONParser.parse(send.stdout.lines[4])["state"] == "ONGOING")
        #expect(!(send.stdout.lines + send.stderr.lines).joined().contains("aivi-test-token"))
    }

    /// PushWard's start is two requests and its end a second one later; ActivitySmith's end a DELETE without channels:
    /// the dry run prints each exchange as it would go, tokens masked.
    @Test func dryRunPrintsEveryHTTPExchangeOfPushWardAndActivitySmith() async throws {
        let text = """
            backends:
              ward: { type: pushward, token: pw-secret-key }
              smith: { type: activitysmith, token: as-secret-key, channels: [family] }
            activities:
              washer:
                backend: [ward, smith]
                active_when: "{{ true }}"
                template: progress
                header_left: Washing
                progress: { style: simple, value: 0.5 }
            """
        let dir = try folder(["rules.yaml": text, "states.json": "[]"])
        let start = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json", "--target", "ward",
                                    "--action", "start", "--dry-run"])
        #expect(await start.exitStatus() == 0)
        #expect(start.stdout.lines.filter { $0.hasPrefix("POST ") || $0.hasPrefix("PATCH ") }
                == ["POST https://api.pushward.app/activities", "PATCH https://api.pushward.app/activities/washer"])
        let end = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json", "--target", "smith",
                                  "--action", "end", "--dry-run"])
        #expect(await end.exitStatus() == 0)
        #expect(end.stdout.lines.first == "DELETE https://activitysmith.com/api/live-activity/stream/washer")
        #expect(!end.stdout.lines.joined().contains("channels"), "the DELETE body has no channels")
        #expect(!(start.stdout.lines + end.stdout.lines).joined().contains("secret-key"))
    }

    /// One activity at two targets: a send goes to the one named, and naming none is a usage error listing them.
    @Test func anActivityWithSeveralTargetsIsSentToTheOneNamed() async throws {
        let service = try FakePushService()
        let text = rules(baseURL: service.baseURL)
            .replacingOccurrences(of: "backends:\n", with: "backends:\n  pulse: { type: islandpulse, token: pulse-test-id, base_url: \(service.baseURL) }\n")
            .replacingOccurrences(of: "  washer:\n", with: "  washer:\n    backend: [aivi, pulse]\n")
        let dir = try folder(["rules.yaml": text, "states.json": Self.states])
        let unnamed = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json"])
        #expect(await unnamed.exitStatus() == 2)
        #expect(unnamed.stderr.lines.first == "livebridge send: activity washer has several targets; name one with --target: aivi, pulse")
        let send = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json", "--target", "pulse",
                                   "--action", "start"])
        #expect(await send.exitStatus() == 0)
        #expect(send.stdout.lines == ["sent start of washer to pulse: HTTP 200"])
        #expect(service.requests.map(\.path) == ["/notify"])
        #expect(service.requests.first?.body?["job_id"] == "washer" && service.requests.first?.body?["progress"] == 0.65)
    }

    @Test func aRefusalIsReportedWithTheBackendsCode() async throws {
        let service = try FakePushService()
        service.script([.init(status: 400, body: #"{"error":"INVALID_BODY"}"#)])
        let dir = try folder(["rules.yaml": rules(baseURL: service.baseURL), "states.json": Self.states])
        let send = try Subprocess(["send", dir + "/rules.yaml", "--activity", "washer", "--states", dir + "/states.json"])
        #expect(await send.exitStatus() == 1)
        #expect(send.stderr.lines.last == "livebridge send: aivi did not take the update: HTTP 400, INVALID_BODY")
    }
}
