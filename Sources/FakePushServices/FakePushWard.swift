import JSON
import LiveActivity
import WebSocketTransport

/// One PushWard activity as the fake keeps it.
struct PushWardActivity {
    var priority: Int
    var state: String
    /// Order of going ongoing, for eviction among equal priorities.
    var since: Int
    /// The content as the phone shows it: every PATCH merged in (RFC 7396).
    var content: JSONValue = .null
}

/// PushWard's activity API as its integration documents it: `POST /activities` (upsert by slug, 201; at most 25
/// activities per key, `409 activity.limit_exceeded`), `PATCH /activities/{slug}` (`{state: ongoing|ended, content}`;
/// 404 for a slug never created), a Bearer integration key (401 `auth.invalid_key`), problems with a `code`. At most
/// five activities are ongoing per key: a sixth evicts the lowest priority (the oldest of equals), which is ended.
/// As its OpenAPI document says: a PATCH is a JSON merge patch (a field left out is kept, `null` removes it: the
/// content checked is the merged one), and the free plan's monthly updates (`pushWardMonthlyQuota`, off unless set)
/// once spent answer `429 quota.exceeded` until the month turns.
extension FakePushService {
    static let pushWardTemplates = ["generic", "countdown", "steps", "alert", "gauge", "timeline", "board", "log", "media"]
    static let pushWardActivityLimit = 25
    static let pushWardOngoingLimit = 5

    func pushWardContract(_ request: HTTPServerRequest, _ body: JSONValue?) -> HTTPServerResponse {
        let key = bearerKey(request)
        guard acceptsAnyToken || pushWardKeys.contains(key) else { return problem(401, "auth.invalid_key", "Invalid integration key") }
        if request.method == "POST", request.path == "/activities" {
            guard let slug = body?["slug"]?.stringValue, !slug.isEmpty, slug.count <= 128,
                  slug.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                return problem(422, "validation.slug", "slug is required: letters, digits, _ and -")
            }
            let priority = body?["priority"]?.intValue ?? 1
            return state.withLock { s -> HTTPServerResponse in
                var activities = s.pushWard[key] ?? [:]
                defer { s.pushWard[key] = activities }
                if activities[slug] == nil, activities.count >= Self.pushWardActivityLimit {
                    return problem(409, "activity.limit_exceeded", "at most \(Self.pushWardActivityLimit) activities")
                }
                activities[slug, default: PushWardActivity(priority: priority, state: "created", since: 0)].priority = priority
                return HTTPServerResponse(status: 201, json: JSONValue.object(["slug": .string(slug)]).jsonText)
            }
        }
        guard request.method == "PATCH" else { return problem(405, "method.not_allowed", "PATCH /activities/{slug}") }
        let slug = String(request.path.dropFirst("/activities/".count))
        guard let body, let next = body["state"]?.stringValue, ["ongoing", "ended"].contains(next) else {
            return problem(422, "validation.state", "state must be ongoing or ended")
        }
        var evicted: String?
        let response = state.withLock { s -> HTTPServerResponse in
            var activities = s.pushWard[key] ?? [:]
            defer { s.pushWard[key] = activities }
            guard var activity = activities[slug] else { return problem(404, "activity.not_found", "no activity \(slug)") }
            if let quota = s.pushWardMonthlyQuota {
                guard s.pushWardUpdates < quota else { return problem(429, "quota.exceeded", "monthly Live Activity updates used up") }
                s.pushWardUpdates += 1
            }
            let merged = body["content"].map { MergePatch.apply($0, to: activity.content) } ?? activity.content
            if let invalid = Self.pushWardContentProblem(merged) { return problem(422, "validation.content", invalid) }
            activity.content = merged
            if let priority = body["priority"]?.intValue { activity.priority = priority }
            if next == "ongoing", activity.state != "ongoing" {
                activity.since = (activities.values.map(\.since).max() ?? 0) + 1
                let ongoing = activities.filter { $0.key != slug && $0.value.state == "ongoing" }
                if ongoing.count >= Self.pushWardOngoingLimit,
                   let lowest = ongoing.min(by: { ($0.value.priority, $0.value.since) < ($1.value.priority, $1.value.since) }) {
                    activities[lowest.key]?.state = "ended"
                    evicted = lowest.key
                }
            }
            activity.state = next
            activities[slug] = activity
            return HTTPServerResponse(status: 200, json: JSONValue.object(["slug": .string(slug), "state": .string(next)]).jsonText)
        }
        if response.status == 200 {
            show("pushward/" + slug, body, ended: next == "ended")
            if let evicted { note(["at": .double(0), "activity": .string("pushward/" + evicted), "decision": "evicted (five ongoing)"]) }
        }
        return response
    }

    /// The content an activity shows now (every PATCH merged in), for tests.
    public func pushWardContent(_ slug: String, key: String = "pushward-test-key") -> JSONValue? {
        state.withLock { $0.pushWard[key]?[slug]?.content }
    }

    /// The free plan's updates a month, from now (nil: unlimited).
    public func limitPushWardUpdates(_ quota: Int?) {
        state.withLock { $0.pushWardMonthlyQuota = quota; $0.pushWardUpdates = 0 }
    }

    /// What the documented contract refuses in a content, or nil.
    static func pushWardContentProblem(_ content: JSONValue?) -> String? {
        guard let content, let template = content["template"]?.stringValue, pushWardTemplates.contains(template) else {
            return "content.template must be one of " + pushWardTemplates.joined(separator: ", ")
        }
        if let progress = content["progress"], !(progress.doubleValue.map { (0...1).contains($0) } ?? false) {
            return "content.progress must be a number in [0, 1]"
        }
        switch template {
        case "countdown" where content["end_date"]?.intValue == nil: return "countdown requires end_date"
        case "steps" where content["total_steps"]?.intValue == nil || content["current_step"]?.intValue == nil:
            return "steps requires total_steps and current_step"
        case "alert" where content["severity"]?.stringValue == nil: return "alert requires severity"
        case "gauge" where content["value"]?.doubleValue == nil: return "gauge requires value, min_value and max_value"
        case "board":
            guard let tiles = content["tiles"]?.arrayValue, (1...4).contains(tiles.count) else { return "board requires 1 to 4 tiles" }
            if tiles.contains(where: { $0["label"]?.stringValue == nil || $0["value"]?.stringValue == nil }) {
                return "board tiles need a label and a string value"
            }
            return nil
        case "log":
            guard let lines = content["lines"]?.arrayValue, (1...20).contains(lines.count) else { return "log requires 1 to 20 lines" }
            return content["log_backlog"] == nil ? nil : "log must not send log_backlog (server-owned field)"
        case "timeline":
            guard let series = content["value"]?.objectValue, (1...10).contains(series.count), series.values.allSatisfy({ $0.doubleValue != nil }) else {
                return "timeline requires value as a labelled map of 1 to 10 numbers"
            }
            return nil
        case let other where other != "media" && content["media_title"] != nil: return "media_title is only supported by the 'media' template"
        default: return nil
        }
    }

    /// PushWard forgets an activity (its time to live ran out): the next PATCH for it answers 404.
    public func forgetPushWardActivity(_ slug: String, key: String = "pushward-test-key") {
        state.withLock { _ = $0.pushWard[key]?.removeValue(forKey: slug) }
    }

    /// PushWard's ongoing activities for a key, by slug (what the phone shows now).
    public func pushWardOngoing(key: String = "pushward-test-key") -> [String] {
        state.withLock { ($0.pushWard[key] ?? [:]).filter { $0.value.state == "ongoing" }.keys.sorted() }
    }

    func problem(_ status: Int, _ code: String, _ detail: String) -> HTTPServerResponse {
        HTTPServerResponse(status: status, contentType: "application/problem+json",
                           body: Array(JSONValue.object(["code": .string(code), "detail": .string(detail), "status": .int(status)]).jsonText.utf8))
    }
}
