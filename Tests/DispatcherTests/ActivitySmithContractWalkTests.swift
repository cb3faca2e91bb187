import Foundation
import HTTPClient
import JSON
@testable import LiveActivity
import Testing
@testable import FakePushServices

/// ActivitySmith's published contract walked field by field (`ActivitySmithContract`, generated from its OpenAPI
/// document): every content_state and metric field LiveBridge can send, at its limit and one past it, to the fake and
/// through LiveBridge's schema. Where LiveBridge is narrower than the document it says why (`stricter`).
struct ActivitySmithContractWalkTests {
    /// The least content of the type each field belongs to.
    static func base(for field: String) -> [String: JSONValue] {
        switch field {
        case "number_of_steps", "current_step", "step_color":
            return ["type": "segmented_progress", "title": "t", "number_of_steps": 4, "current_step": 0]
        case "percentage": return ["type": "progress", "title": "t"]
        case "value", "upper_limit": return ["type": "progress", "title": "t", "value": 0, "upper_limit": 10]
        case "duration_seconds", "counts_down": return ["type": "timer", "title": "t", "duration_seconds": 60]
        case "metrics": return ["type": "metrics", "title": "t"]
        case "message": return ["type": "alert", "title": "t", "message": "m"]
        default: return ["type": "progress", "title": "t", "percentage": 50]
        }
    }

    /// Where LiveBridge's schema is narrower than the document, on purpose.
    static let stricter: [String: String] = [
        "number_of_steps": "at most 64 segments: more do not draw on a Lock Screen",
        "duration_seconds": "a whole number of seconds up to a week: a timer of 0.5 s is not one",
        "metric.value": "a number is sent as text (at most 64 characters), as the phone shows it",
        // The document gives these no length; LiveBridge bounds them so a runaway template cannot fill a push.
        "title": "at most 256 characters: a Lock Screen line, and the document sets no bound",
        "subtitle": "at most 256 characters, as the title",
        "metric.label": "at most 64 characters: a metric's caption",
        "metric.unit": "at most 16 characters: a unit beside its value",
    ]

    /// Where the document sets no length, LiveBridge's bound is listed with its reason: the fake takes one past it,
    /// LiveBridge refuses it before sending.
    @Test func boundsTheDocumentLeavesOpenAreListed() async throws {
        let client = HTTPClient()
        let long: [(String, [String: JSONValue])] = [
            ("title", ["type": "progress", "title": .string(String(repeating: "t", count: 257)), "percentage": 5]),
            ("subtitle", ["type": "progress", "title": "t", "subtitle": .string(String(repeating: "s", count: 257)), "percentage": 5]),
            ("metric.label", ["type": "metrics", "title": "t", "metrics": [["label": .string(String(repeating: "l", count: 65)), "value": "1"]]]),
            ("metric.unit", ["type": "metrics", "title": "t", "metrics": [["label": "l", "value": "1", "unit": .string(String(repeating: "u", count: 17))]]]),
        ]
        for (path, content) in long {
            #expect(try await put(client, try FakePushService(), "walk", content) == 200, "the document leaves \(path) open")
            let (_, issues) = PayloadNormalizer.normalize(.object(content), as: ActivitySmithSchema.contentState)
            #expect(!issues.isEmpty && Self.stricter[path] != nil, "\(path): LiveBridge's bound, with its reason")
        }
    }

    func put(_ client: HTTPClient, _ service: FakePushService, _ key: String, _ content: [String: JSONValue]) async throws -> Int {
        try await client.send(HTTPRequest(method: "PUT", url: service.baseURL + "/live-activity/stream/\(key)",
                                          headers: [("Authorization", "Bearer activitysmith-test-key"), ("Content-Type", "application/json")],
                                          body: JSONValue.object(["content_state": .object(content)]).jsonBytes)).status
    }

    @Test func everyFieldAtAndPastItsLimit() async throws {
        var walked = 0
        let client = HTTPClient()
        var fields: [(path: String, field: ContractField, build: (JSONValue) -> [String: JSONValue])] = []
        for (name, field) in ActivitySmithContract.contentState.sorted(by: { $0.key < $1.key }) {
            fields.append((name, field, { value in var c = Self.base(for: name); c[name] = value; return c }))
        }
        for (name, field) in ActivitySmithContract.metric.sorted(by: { $0.key < $1.key }) {
            fields.append(("metric.\(name)", field, { value in
                var metric: [String: JSONValue] = ["label": "l", "value": "1"]
                metric[name] = value
                return ["type": "metrics", "title": "t", "metrics": [.object(metric)]]
            }))
        }
        for (path, field, build) in fields {
            let name = path.hasPrefix("metric.") ? String(path.dropFirst(7)) : path
            let known = path.hasPrefix("metric.") ? ActivitySmithSchema.metric.field(name) != nil
                : ActivitySmithSchema.schema(Self.base(for: name)["type"]!.stringValue!)?.field(name) != nil
            guard known else { continue }
            for (value, allowed, what) in ContractWalk.cases(field) {
                // A fresh fake per value: four activities at most, sixty requests a minute.
                let service = try FakePushService()
                let content = build(value)
                let status = try await put(client, service, "walk", content)
                #expect((status == 200) == allowed, "the fake: \(path) at \(what) answered \(status)")
                // LiveBridge sends its normalised form (a number as text…): never one the service refuses, and it
                // refuses what the service takes only where it says why.
                let (normalized, issues) = PayloadNormalizer.normalize(.object(content), as: ActivitySmithSchema.contentState)
                if issues.isEmpty, let sent = normalized?.objectValue {
                    #expect(try await put(client, try FakePushService(), "walk", sent) == 200, "LiveBridge would send \(path) at \(what) as \(sent), refused")
                } else if allowed {
                    #expect(Self.stricter[path] != nil, "LiveBridge refuses \(path) at \(what), which the service takes: \(issues)")
                }
                walked += 1
            }
        }
        #expect(walked >= 12, "walked \(walked) values")
    }

    /// Nested objects by the document: channels (at least one), the action (title, type, url; open_url https:// or
    /// shortcuts://, a webhook https://), the alert (title, body only), an icon needs its symbol, a badge its title,
    /// and the stream key's pattern.
    @Test func nestedObjectsAsTheDocumentSays() async throws {
        let service = try FakePushService()
        let client = HTTPClient()
        let content: JSONValue = ["type": "progress", "title": "t", "percentage": 5]
        func send(_ body: [String: JSONValue], key: String = "a", method: String = "PUT") async throws -> Int {
            try await client.send(HTTPRequest(method: method, url: service.baseURL + "/live-activity/stream/\(key)",
                                              headers: [("Authorization", "Bearer activitysmith-test-key"), ("Content-Type", "application/json")],
                                              body: JSONValue.object(body).jsonBytes)).status
        }
        let open: JSONValue = ["title": "Open", "type": "open_url", "url": "https://example.com/x"]
        #expect(try await send(["content_state": content, "channels": ["home"], "action": open]) == 200)
        #expect(try await send(["content_state": content, "channels": []]) == 400, "channels: at least one")
        #expect(try await send(["content_state": content, "channels": [1]]) == 400, "channels are text")
        #expect(try await send(["content_state": content, "action": ["title": "Open", "type": "open_url"]]) == 400, "an action needs its url")
        #expect(try await send(["content_state": content, "action": ["title": "Open", "type": "open_url", "url": "http://x"]]) == 400)
        #expect(try await send(["content_state": content, "action": ["title": "Run", "type": "open_url", "url": "shortcuts://run-shortcut?name=x"]]) == 200)
        #expect(try await send(["content_state": content, "secondary_action": ["title": "Hook", "type": "webhook", "url": "shortcuts://x"]]) == 400)
        #expect(try await send(["content_state": content, "action": ["title": "Open", "type": "open_url", "url": "https://x", "colour": "red"]]) == 400)
        #expect(try await send(["content_state": content, "alert": ["title": "t", "subtitle": "s"]]) == 400, "the alert takes title and body only")
        var iconless = content.objectValue!
        iconless["icon"] = ["color": "red"]
        #expect(try await send(["content_state": .object(iconless)]) == 400, "an icon needs its symbol")
        iconless["icon"] = ["symbol": "bolt.fill", "color": "red"]
        #expect(try await send(["content_state": .object(iconless)]) == 200)
        #expect(try await send(["content_state": content], key: "a.b") == 400, "the stream key: letters, digits, _ and -")
        #expect(try await send(["content_state": content, "action": open], method: "DELETE") == 200, "the end takes an action too")
        // The reviewer's findings: what the document says in words and dependentRequired.
        #expect(try await send(["content_state": ["type": "alert", "title": "t"]], key: "b") == 400, "an alert needs its message")
        #expect(try await send(["content_state": ["type": "progress", "title": "t", "value": 5]], key: "b") == 400, "value needs upper_limit")
        #expect(try await send(["content_state": ["type": "progress", "title": "t", "percentage": 5, "value": 5]], key: "b") == 400)
        #expect(try await send(["content_state": content, "channels": ["a"], "target": ["channels": ["b"]]], key: "b") == 400, "channels must match")
        #expect(try await send(["content_state": ["type": "progress", "title": "", "percentage": 5]], key: "b") == 200, "no minimum length on title")
        for bad: JSONValue in [["type": "progress", "title": "t", "percentage": 50, "value": 5],
                               ["type": "progress", "title": "t", "percentage": 50, "value": 5, "upper_limit": -3]] {
            #expect(!PayloadNormalizer.normalize(bad, as: ActivitySmithSchema.contentState).1.isEmpty, "LiveBridge refuses \(bad) too")
        }
        let notJSON = try await client.send(HTTPRequest(method: "DELETE", url: service.baseURL + "/live-activity/stream/a",
                                                        headers: [("Authorization", "Bearer activitysmith-test-key"), ("Content-Type", "application/json")],
                                                        body: Array("not json".utf8))).status
        #expect(notJSON == 400)
    }

    /// The request's own shape: unknown fields refused in the body and in content_state.
    @Test func unknownFieldsAreRefused() async throws {
        let service = try FakePushService()
        let client = HTTPClient()
        #expect(try await put(client, service, "a", ["type": "progress", "title": "t", "percentage": 5, "colour": "red"]) == 400)
        #expect(try await put(client, service, "a", ["type": "metrics", "title": "t", "metrics": [["label": "l", "value": "1", "icon": "x"]]]) == 400)
        #expect(try await put(client, service, "a", ["type": "segmented_progress", "title": "t", "number_of_steps": 2, "current_step": 3]) == 400)
        #expect(try await put(client, service, "a", ["type": "progress", "title": "t", "percentage": 5]) == 200)
    }
}
