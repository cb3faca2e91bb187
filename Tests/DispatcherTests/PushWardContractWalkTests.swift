import Foundation
import HTTPClient
import JSON
import LiveActivity
import Testing
@testable import FakePushServices

/// PushWard's published contract walked field by field (`PushWardContract`, generated from its OpenAPI document):
/// every content field LiveBridge can send, at its limit and one past it. The fake takes exactly what the document
/// allows, and LiveBridge's own schema (what `check` and the renderer hold a payload to) agrees, so nothing it sends
/// is refused and nothing the service takes is refused here first.
struct PushWardContractWalkTests {
    /// The least content each template takes.
    static let bases: [String: [String: JSONValue]] = [
        "generic": [:], "countdown": ["end_date": 1_795_352_400], "steps": ["total_steps": 3, "current_step": 1],
        "alert": ["severity": "info"], "gauge": ["value": 5, "min_value": 0, "max_value": 10], "timeline": ["value": ["a": 1]],
        "board": ["tiles": [["label": "a", "value": "1"]]], "log": ["lines": [["text": "a"]]], "media": [:],
    ]

    /// Where LiveBridge's schema is narrower than the document, on purpose.
    static let stricter = ["media.duration_seconds": "a media item shorter than a second is not one: at least 1"]

    @Test func everyContentFieldAtAndPastItsLimit() async throws {
        var walked = 0
        for template in PushWardContract.content.keys.sorted() {
            let schema = try #require(PushWardSchema.schema(template), "LiveBridge has no \(template) template")
            let service = try FakePushService()
            let client = HTTPClient()
            func send(_ method: String, _ path: String, _ body: JSONValue) async throws -> Int {
                let response = try await client.send(HTTPRequest(method: method, url: service.baseURL + path,
                                                                 headers: [("Authorization", "Bearer pushward-test-key"), ("Content-Type", "application/json")],
                                                                 body: body.jsonBytes))
                return response.status
            }
            #expect(try await send("POST", "/activities", ["slug": .string(template), "name": .string(template)]) == 201)
            for (name, field) in PushWardContract.content[template]!.sorted(by: { $0.key < $1.key }) where name != "template" {
                // Fields LiveBridge never sends are the service's business alone.
                guard schema.field(name) != nil else { continue }
                for (value, allowed, what) in ContractWalk.cases(field) {
                    var content = Self.bases[template]!
                    content["template"] = .string(template)
                    content[name] = value
                    // A primary series must name one of the values (LiveBridge checks that too).
                    if name == "primary_series", let series = value.stringValue { content["value"] = [series: 1] }
                    let status = try await send("PATCH", "/activities/\(template)", ["state": "ongoing", "content": .object(content)])
                    #expect((status == 200) == allowed, "the fake: \(template).\(name) at \(what) answered \(status)")
                    let (_, issues) = PayloadNormalizer.normalize(.object(content), as: PushWardSchema.content)
                    // LiveBridge never sends what the document refuses; it refuses more only where it says why.
                    if !allowed || Self.stricter["\(template).\(name)"] == nil {
                        #expect(issues.isEmpty == allowed, "LiveBridge: \(template).\(name) at \(what): \(issues)")
                    }
                    walked += 1
                }
            }
        }
        #expect(walked > 100, "walked \(walked) values")
    }

    /// What the document says in words rather than limits: live_progress requires end_date.
    @Test func liveProgressNeedsAnEndDate() async throws {
        let without: JSONValue = ["template": "generic", "live_progress": true]
        let with: JSONValue = ["template": "generic", "live_progress": true, "end_date": 1_795_352_400]
        #expect(!PayloadNormalizer.normalize(without, as: PushWardSchema.content).1.isEmpty)
        #expect(PayloadNormalizer.normalize(with, as: PushWardSchema.content).1.isEmpty)
        #expect(FakePushService.pushWardContentProblem(without) == "live_progress requires end_date")
        #expect(FakePushService.pushWardContentProblem(with) == nil)
    }

    /// The top level of a create and an update: unknown fields refused, each bound where the document puts it.
    @Test func theRequestsThemselvesAreStrict() async throws {
        let service = try FakePushService(accounts: [FakeAccount(.pushward, "update-only", plan: .updateOnly)])
        let client = HTTPClient()
        func send(_ method: String, _ path: String, _ body: String, key: String = "pushward-test-key") async throws -> (Int, JSONValue?) {
            let response = try await client.send(HTTPRequest(method: method, url: service.baseURL + path,
                                                             headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")],
                                                             body: Array(body.utf8)))
            return (response.status, try? JSONParser.parse(response.body))
        }
        #expect(try await send("POST", "/activities", #"{"slug":"w","name":"w","colour":"red"}"#).0 == 422, "unknown field")
        #expect(try await send("POST", "/activities", #"{"slug":"w"}"#).0 == 422, "name is required")
        #expect(try await send("POST", "/activities", #"{"slug":"-w","name":"w"}"#).0 == 422, "slug pattern")
        #expect(try await send("POST", "/activities", #"{"slug":"w","name":"w","priority":11}"#).0 == 422)
        #expect(try await send("POST", "/activities", #"{"slug":"w","name":"w","stale_ttl":0}"#).0 == 422)
        #expect(try await send("POST", "/activities", #"{"slug":"w","name":"w"}"#, key: "update-only").0 == 403, "an update-only key cannot create")
        #expect(try await send("POST", "/activities", #"{"slug":"w","name":"w","priority":10,"dismissal_ttl":14400}"#).0 == 201)
        #expect(try await send("PATCH", "/activities/w", #"{"state":"ongoing","colour":"red"}"#).0 == 422, "unknown top-level field")
        #expect(try await send("PATCH", "/activities/w", #"{"state":"paused"}"#).1?["code"] == "activity.state_invalid")
        #expect(try await send("PATCH", "/activities/w", #"{"state":"ONGOING","priority":11}"#).1?["code"] == "activity.priority_invalid")
        #expect(try await send("PATCH", "/activities/w", #"not json"#).1?["code"] == "request.body_invalid")
        #expect(try await send("PATCH", "/activities/w", #"{"state":"Ongoing","content":{"template":"generic"}}"#).0 == 200, "state is case-insensitive")
        #expect(try await send("PATCH", "/activities/w", #"{"content":{"template":"generic","progress":0.2}}"#).0 == 200, "state may be left out")
        #expect(try await send("PATCH", "/activities/x", #"{"state":"ongoing"}"#).1?["code"] == "activity.not_found")
        #expect(try await send("PATCH", "/activities/x?upsert=true", #"{"state":"ongoing","content":{"template":"generic"}}"#).0 == 201)
        #expect(try await send("PATCH", "/activities/y?upsert=true", #"{"state":"ongoing"}"#, key: "update-only").1?["code"] == "activity.upsert_forbidden")
        #expect(try await send("PATCH", "/activities/w", #"{"state":"ongoing"}"#, key: "wrong").1?["code"] == "token.invalid")
        // What its descriptions say in words (the reviewer's findings): tap URLs by scheme and host, start before end,
        // a line's text not empty; a PATCH of the state alone on an activity without content is taken.
        #expect(try await send("POST", "/activities", #"{"slug":"z","name":"z"}"#).0 == 201)
        #expect(try await send("PATCH", "/activities/z", #"{"state":"ended"}"#).0 == 200, "content is optional")
        for url in ["javascript:alert(1)", "data:text/html,hi", "https:nohost"] {
            #expect(try await send("PATCH", "/activities/w", #"{"content":{"template":"generic","tap_action":{"url":"\#(url)"}}}"#).0 == 422, "\(url)")
            #expect(!PayloadNormalizer.normalize(["template": "generic", "tap_action": ["url": .string(url)]], as: PushWardSchema.content).1.isEmpty,
                    "LiveBridge refuses \(url) too")
        }
        #expect(try await send("PATCH", "/activities/w", #"{"content":{"template":"countdown","start_date":1900000000,"end_date":1800000000}}"#).0 == 422)
        #expect(try await send("PATCH", "/activities/w", #"{"content":{"template":"log","lines":[{"text":""}]}}"#).0 == 422)
        #expect(!PayloadNormalizer.normalize(["template": "log", "lines": [["text": ""]]], as: PushWardSchema.content).1.isEmpty,
                "LiveBridge refuses an empty log line too")
    }

    /// 200 requests a minute from one address, then 429 with Retry-After: 60; and at most 50 activities. Sent eight at
    /// a time, so the 201 fit in the minute even in a test process starved under ThreadSanitizer (one by one they once
    /// took longer, and the window rolled on).
    @Test func theRateAndActivityLimits() async throws {
        let service = try FakePushService()
        let client = HTTPClient()
        let answers = try await withThrowingTaskGroup(of: HTTPResponse.self, returning: [HTTPResponse].self) { group in
            for n in 0..<201 {
                group.addTask {
                    try await client.send(HTTPRequest(method: "POST", url: service.baseURL + "/activities",
                                                      headers: [("Authorization", "Bearer pushward-test-key"), ("Content-Type", "application/json")],
                                                      body: Array(#"{"slug":"a\#(n)","name":"a"}"#.utf8)))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let statuses = Dictionary(grouping: answers, by: \.status).mapValues(\.count)
        #expect(statuses == [201: 50, 409: 150, 429: 1], "50 activities, the 51st refused, the 201st request limited")
        #expect(answers.first { $0.status == 429 }?.headers["retry-after"] == "60")
    }
}
