import FoundationEssentials
import JSON
import LiveActivity
import Platform
import WebSocketTransport

/// One ActivitySmith stream as the fake keeps it.
struct ActivitySmithStream: Sendable {
    var type: String
    var state: JSONValue
    var generation: Int
    /// Paused by its user in the app: a PUT answers `paused` and changes nothing.
    var paused = false
}

/// ActivitySmith's managed streams as its OpenAPI document (ActivitySmithHQ/docs api-reference/openapi.json)
/// describes them: `PUT /live-activity/stream/{key}` with `{content_state, channels?, target?, action?,
/// secondary_action?, alert?}` answers `{success, operation: started|updated|rotated|noop, stream_key, activity_id}`
/// (a new type rotates to a new activity, the same state is a noop); `DELETE` ends it, its optional body
/// `{content_state?, action?, secondary_action?, alert?}`. Both bodies refuse unknown keys (additionalProperties:
/// false) with a 400, as the service does. Content: title required, colours from its list, a segmented current_step
/// of 0 or more, metric values at most 64 characters, a non-empty message. A Bearer API key; at most four Live
/// Activities at once, the fifth refused with `429 {"error": "Live Activity limit reached", "limit": 4, "active": 4}`;
/// 60 requests a minute per account (then `429` with Retry-After); a stream its user paused answers `paused`.
/// The documents are silent on the body of a 400 beyond `{error, message}`: the fake answers that.
extension FakePushService {
    static let activitySmithLimit = 4
    static let activitySmithRequestsPerMinute = 60

    func activitySmithContract(_ request: HTTPServerRequest, _ body: JSONValue?) -> HTTPServerResponse {
        let key = bearerKey(request)
        guard plan(key, at: .activitysmith) != nil else { return error(401, "unauthorized", "Invalid API key") }
        let now = Date().timeIntervalSince1970
        let waited: Double? = self.state.withLock { s in
            var recent = (s.activitySmith.requests[key] ?? []).filter { $0 > now - 60 }
            defer { s.activitySmith.requests[key] = recent }
            guard recent.count < Self.activitySmithRequestsPerMinute else { return recent[0] + 60 - now }
            recent.append(now)
            return nil
        }
        if let waited {
            var limited = error(429, "rate_limited", "\(Self.activitySmithRequestsPerMinute) requests per minute")
            limited.headers["Retry-After"] = String(Int(waited.rounded(.up)))
            return limited
        }
        let streamKey = String(request.path.dropFirst("/live-activity/stream/".count))
        // A body that is not JSON, or not sent as JSON, is not read (its document is silent on the answer: 400).
        if !request.body.isEmpty {
            guard body != nil else { return error(400, "Bad Request", "the body is not JSON") }
            guard request.headers["content-type"]?.lowercased().hasPrefix("application/json") == true else {
                return error(400, "Bad Request", "the body must be sent as application/json")
            }
        }
        let state = body?["content_state"]
        if let problem = ContractField.problem(["stream_key": .string(streamKey)], ActivitySmithContract.streamKey, required: [], strict: true, at: "path") {
            return error(400, "Bad Request", problem)
        }
        // The whole body by its document, nested objects included (action URLs, alert icon and badge, channels…).
        // (Unknown fields refused at every level: the DELETE body has no channels.)
        if let fields = body?.objectValue {
            let (schema, required, others) = request.method == "DELETE"
                ? (ActivitySmithContract.streamDeleteRequest, ActivitySmithContract.streamDeleteRequestRequired, ActivitySmithContract.streamDeleteRequestAllowsOthers)
                : (ActivitySmithContract.streamRequest, ActivitySmithContract.streamRequestRequired, ActivitySmithContract.streamRequestAllowsOthers)
            if let problem = ContractField.problem(fields, schema, required: required, strict: !others, at: "body") {
                return error(400, "Bad Request", problem)
            }
            // "channels ... target.channels is also accepted. If both are provided, they must match."
            if let channels = fields["channels"], let target = fields["target"]?["channels"], channels != target {
                return error(400, "Bad Request", "body.channels and body.target.channels must match")
            }
            // LiveActivityAction's allOf if/then (not generated): open_url takes https:// or shortcuts://, a webhook https://.
            for name in ["action", "secondary_action"] {
                guard let action = fields[name], let url = action["url"]?.stringValue else { continue }
                let schemes = action["type"]?.stringValue == "webhook" ? ["https://"] : ["https://", "shortcuts://"]
                if action["type"]?.stringValue == "open_url" || action["type"]?.stringValue == "webhook", !schemes.contains(where: url.hasPrefix) {
                    return error(400, "Bad Request", "body.\(name).url: expected to match ^\(schemes.count == 1 ? "https" : "(https|shortcuts)")://")
                }
            }
        }
        if let problem = Self.activitySmithContentProblem(state) { return error(400, "Bad Request", problem) }
        let response: HTTPServerResponse = self.state.withLock { s in
            var streams = s.activitySmith.streams[key] ?? [:]
            defer { s.activitySmith.streams[key] = streams }
            let now = JSONValue.string(Timestamp.iso8601(Date().timeIntervalSince1970))
            if request.method == "DELETE" {
                guard streams.removeValue(forKey: streamKey) != nil else { return error(404, "not_found", "no stream \(streamKey)") }
                return HTTPServerResponse(status: 200, json: JSONValue.object(["success": true, "operation": "ended", "stream_key": .string(streamKey),
                                                                               "timestamp": now]).jsonText)
            }
            guard request.method == "PUT" else { return error(405, "method_not_allowed", "PUT or DELETE") }
            let type = state?["type"]?.stringValue ?? streams[streamKey]?.type
            guard let type, ["progress", "segmented_progress", "metrics", "stats", "alert", "timer"].contains(type) else {
                return error(400, "bad_request", "content_state.type is required on the first PUT")
            }
            // Required, with no minimum length in its document.
            guard state?["title"]?.stringValue != nil else { return error(400, "bad_request", "content_state.title is required") }
            // "message: Required for type=alert" (its description).
            if type == "alert", state?["message"] == nil, streams[streamKey]?.state["message"] == nil {
                return error(400, "bad_request", "content_state.message is required for type=alert")
            }
            let operation: String
            var stream = streams[streamKey] ?? ActivitySmithStream(type: type, state: .null, generation: 0)
            if streams[streamKey] == nil {
                guard streams.count < Self.activitySmithLimit else {
                    return HTTPServerResponse(status: 429, json: JSONValue.object([
                        "error": "Live Activity limit reached", "message": .string("At most \(Self.activitySmithLimit) Live Activities can be active at once"),
                        "limit": .int(Self.activitySmithLimit), "active": .int(streams.count),
                    ]).jsonText)
                }
                operation = "started"
                stream.generation = 1
            } else if stream.paused {
                return HTTPServerResponse(status: 200, json: JSONValue.object([
                    "success": true, "operation": "paused", "stream_key": .string(streamKey), "timestamp": now,
                ]).jsonText)
            } else if stream.type != type {
                operation = "rotated"
                stream.generation += 1
            } else {
                operation = stream.state == state ? "noop" : "updated"
            }
            stream.type = type
            stream.state = state ?? .null
            streams[streamKey] = stream
            return HTTPServerResponse(status: 200, json: JSONValue.object([
                "success": true, "operation": .string(operation), "stream_key": .string(streamKey),
                "activity_id": .string("\(streamKey)-\(stream.generation)"), "timestamp": now,
            ]).jsonText)
        }
        if response.status == 200, let body { show("activitysmith/" + streamKey, body, ended: request.method == "DELETE") }
        return response
    }

    /// What the document refuses in a content_state beyond the fields the body's check walked (nil: nothing): its
    /// dependentRequired (generated) and what its descriptions say in words: current_step at most number_of_steps.
    static func activitySmithContentProblem(_ state: JSONValue?) -> String? {
        guard let state else { return nil }
        guard let object = state.objectValue else { return "content_state must be an object" }
        for (field, needs) in ActivitySmithContract.contentStateDependentRequired.sorted(by: { $0.key < $1.key }) where object[field] != nil {
            for other in needs where object[other] == nil { return "content_state.\(other): required with \(field)" }
        }
        if let steps = object["number_of_steps"]?.intValue, let step = object["current_step"]?.intValue, step > steps {
            return "content_state.current_step must be at most number_of_steps"
        }
        return nil
    }

    /// The user pauses a stream in the app: its updates are answered `paused` until it ends.
    public func pauseActivitySmithStream(_ streamKey: String, key: String = "activitysmith-test-key") {
        state.withLock { $0.activitySmith.streams[key]?[streamKey]?.paused = true }
    }

    /// The streams live for a key (what the phone shows now).
    public func activitySmithStreams(key: String = "activitysmith-test-key") -> [String] {
        state.withLock { ($0.activitySmith.streams[key] ?? [:]).keys.sorted() }
    }
}

extension ActivitySmithSchema: FakedService {
    static let testAccounts = ["activitysmith-test-key"]

    static func serves(method: String, path: String) -> Bool { path.hasPrefix("/live-activity/stream/") }
    static let routes = "PUT/DELETE /live-activity/stream/KEY"

    static func answer(_ request: HTTPServerRequest, _ body: JSONValue?, in fake: FakePushService) -> HTTPServerResponse {
        fake.activitySmithContract(request, body)
    }

    static func draws(method: String, path: String) -> Bool { method == "PUT" || method == "DELETE" }

    static func problems(_ body: JSONValue) -> [PayloadIssue] {
        // The end's dismissal time is added by the request, after the schema's content.
        var state = body["content_state"]?.objectValue ?? [:]
        state["auto_dismiss_seconds"] = nil
        return PayloadNormalizer.normalize(.object(state), as: ActivitySmithSchema.contentState, path: "content_state").1
    }
}

/// ActivitySmith's side of the fake: streams per API key by stream key, and each key's requests of the last minute.
struct ActivitySmithFakeState: FakeState {
    var streams: [String: [String: ActivitySmithStream]] = [:]
    var requests: [String: [Double]] = [:]
}

extension FakePushService.State {
    var activitySmith: ActivitySmithFakeState {
        get { self[ActivitySmithFakeState.self] }
        _modify { yield &self[ActivitySmithFakeState.self] }
    }
}
