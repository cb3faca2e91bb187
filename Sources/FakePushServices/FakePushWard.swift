import FoundationEssentials
public import JSON
import LiveActivity
import Platform
import WebSocketTransport

/// One PushWard activity as the fake keeps it.
struct PushWardActivity: Sendable {
    var priority: Int
    var state: String
    /// Order of going ongoing, for eviction among equal priorities.
    var since: Int
    /// The content as the phone shows it: every PATCH merged in (RFC 7396).
    var content: JSONValue = .null
    /// `stale_ttl`: seconds without a PATCH after which the server ends an ongoing activity itself.
    var staleTTL: Int?
    /// When it was last patched (the fake's clock), for `stale_ttl`.
    var lastPatched: Double = 0

    /// PushWard's own ends: a countdown at its `end_date`, any activity `stale_ttl` seconds after its last PATCH.
    mutating func endIfDue(now: Double) {
        guard state == "ongoing" else { return }
        if content["template"]?.stringValue == "countdown", let end = content["end_date"]?.doubleValue, end <= now { state = "ended" }
        if let staleTTL, now - lastPatched >= Double(staleTTL) { state = "ended" }
    }
}

/// PushWard's activity API as its published OpenAPI document says (`PushWardContract`, generated from it, and
/// ../shared/notes/push-backends.md): `POST /activities` creates or refreshes by slug (201; strict body: slug by its
/// pattern, name 1–256, priority 0–10, TTL ranges; a key with the `activity:update` scope only gets 403; at most 50
/// activities, `409 activity.limit_exceeded`); `PATCH /activities/{slug}` is an RFC 7396 merge patch (strict top
/// level, `state` ongoing|ended case-insensitive or kept, 400 `activity.state_invalid` / `activity.priority_invalid`,
/// content checked field by field against its template, 422 `activity.content_invalid`; 404 `activity.not_found`
/// unless `?upsert=true`, which an update-only key may not use: 403 `activity.upsert_forbidden`). A bad or missing
/// key is 401 `token.invalid`; a body that is not JSON 400 `request.body_invalid`. 200 requests a minute from one
/// address, then 429 `rate_limit.exceeded` with Retry-After: 60. The free plan's monthly updates
/// (`limitPushWardUpdates`, off unless set) once spent answer 429 `quota.exceeded` with `reset_at`. At most five
/// activities are ongoing per key: a sixth evicts the lowest priority (the oldest of equals), which becomes
/// `preempted`. The server ends activities itself: a countdown at its `end_date`, any activity `stale_ttl` seconds
/// after its last PATCH; a PATCH without `state` keeps the stored one (an ended activity stays ended, a new one
/// inactive), and on a preempted activity must say ongoing or ended.
///
/// Where the document is silent, this fake chooses, and says so here: which statuses count against the monthly
/// quota (taken: every PATCH that changes content or state, as "Live Activity updates"); whether a PATCH sent as
/// `application/json` rather than `application/merge-patch+json` is taken (taken); how a 422 for a body field
/// that breaks its schema is coded (taken: `validation failed`, no code, as the document's create example); what a
/// PATCH without `state` on a preempted activity answers (taken: 422 `activity.state_invalid`); the moment of a
/// server end (taken: seen at the next request for that key, as a client would see it).
extension FakePushService {
    static let pushWardTemplates = ["generic", "countdown", "steps", "alert", "gauge", "timeline", "board", "log", "media"]
    static let pushWardActivityLimit = 50
    static let pushWardOngoingLimit = 5
    static let pushWardRequestsPerMinute = 200

    func pushWardContract(_ request: HTTPServerRequest, _ body: JSONValue?) -> HTTPServerResponse {
        let key = bearerKey(request)
        guard let plan = plan(key, at: .pushward) else {
            return problem(401, "token.invalid", "invalid token")
        }
        let now = Date().timeIntervalSince1970 + state.withLock { $0.pushWard.clockAhead }
        state.withLock { s in
            guard var activities = s.pushWard.activities[key] else { return }
            for slug in activities.keys { activities[slug]?.endIfDue(now: now) }
            s.pushWard.activities[key] = activities
        }
        let limited = state.withLock { s -> Bool in
            s.pushWard.requests.removeAll { $0 <= now - 60 }
            guard s.pushWard.requests.count < Self.pushWardRequestsPerMinute else { return true }
            s.pushWard.requests.append(now)
            return false
        }
        if limited {
            return HTTPServerResponse(status: 429, contentType: "application/problem+json", headers: ["Retry-After": "60"],
                                      body: Array(JSONValue.object(["code": "rate_limit.exceeded", "detail": "rate limit exceeded", "status": 429,
                                                                    "retry_after_ms": 60000]).jsonText.utf8))
        }
        let (path, query) = Self.splitQuery(request.path)
        guard !request.body.isEmpty else { return problem(400, "request.body_required", "request body is required") }
        guard let body, case .object(let fields) = body else { return problem(400, "request.body_invalid", "invalid JSON: not an object") }
        let canCreate = plan != .updateOnly
        if request.method == "POST", path == "/activities" {
            guard canCreate else { return HTTPServerResponse(status: 403, contentType: "application/problem+json",
                                                             body: Array(#"{"detail":"insufficient permissions","status":403}"#.utf8)) }
            if let invalid = ContractField.problem(fields, PushWardContract.createActivityRequest, required: PushWardContract.createActivityRequestRequired,
                                                  strict: true, at: "body") {
                return validation(invalid)
            }
            let slug = fields["slug"]!.stringValue!
            if let invalid = PushWardSchema.slugProblem(slug) { return validation("body.slug: \(invalid)") }
            let priority = fields["priority"]?.intValue ?? 0
            return state.withLock { s -> HTTPServerResponse in
                // Its document lists 429 quota.exceeded for a create too: a spent plan refuses it (spending nothing).
                if let spent = Self.quotaProblem(&s, now: now, spending: false) { return spent }
                var activities = s.pushWard.activities[key] ?? [:]
                defer { s.pushWard.activities[key] = activities }
                if activities[slug] == nil, activities.count >= Self.pushWardActivityLimit {
                    return problem(409, "activity.limit_exceeded", "activity limit reached (max \(Self.pushWardActivityLimit))")
                }
                let created = activities[slug] == nil
                activities[slug, default: PushWardActivity(priority: priority, state: "created", since: 0)].priority = priority
                if let ttl = fields["stale_ttl"]?.intValue { activities[slug]?.staleTTL = ttl }
                return HTTPServerResponse(status: 201, json: JSONValue.object(["slug": .string(slug)]).jsonText,
                                          headers: ["X-Resource-Action": created ? "created" : "updated"])
            }
        }
        guard request.method == "PATCH", path.hasPrefix("/activities/") else { return problem(405, "method.not_allowed", "PATCH /activities/{slug}") }
        let slug = String(path.dropFirst("/activities/".count))
        let upsert = query["upsert"] == "true"
        if upsert, !canCreate { return problem(403, "activity.upsert_forbidden", "upsert requires activity:manage scope or full access") }
        if let invalid = ContractField.problem(fields, PushWardContract.updateActivityRequest, required: [], strict: true, at: "body") {
            return validation(invalid)
        }
        var next: String?
        if let given = fields["state"]?.stringValue {
            guard ["ongoing", "ended"].contains(given.lowercased()) else {
                return problem(400, "activity.state_invalid", "invalid activity state: \"\(given)\", must be one of ongoing, ended, preempted")
            }
            next = given.lowercased()
        }
        if let priority = fields["priority"]?.intValue, !(0...10).contains(priority) {
            return problem(400, "activity.priority_invalid", "priority must be between 0 and 10")
        }
        if let content = fields["content"], content != .null {
            guard case .object(let members) = content else { return problem(422, "activity.content_invalid", "content must be an object") }
            // A merge patch: null clears a field, so only the values given are checked here; the merged whole below.
            if let template = members["template"]?.stringValue, let schema = PushWardContract.content[template],
               let invalid = ContractField.problem(members.filter { $0.value != .null }, schema, required: [], strict: false, at: "content") {
                return problem(422, "activity.content_invalid", invalid)
            }
        }
        var evicted: String?
        var shownState = next ?? "ongoing"
        var shownContent: JSONValue = .null
        let response = state.withLock { s -> HTTPServerResponse in
            var activities = s.pushWard.activities[key] ?? [:]
            defer { s.pushWard.activities[key] = activities }
            var created = false
            if activities[slug] == nil, upsert {
                guard PushWardSchema.slugProblem(slug) == nil else { return validation("path.slug: not a slug") }
                guard activities.count < Self.pushWardActivityLimit else {
                    return problem(409, "activity.limit_exceeded", "activity limit reached (max \(Self.pushWardActivityLimit))")
                }
                activities[slug] = PushWardActivity(priority: 0, state: "created", since: 0)
                created = true
            }
            guard var activity = activities[slug] else { return problem(404, "activity.not_found", "activity not found") }
            let merged = fields["content"].map { MergePatch.apply($0, to: activity.content) } ?? activity.content
            // A PATCH of its state alone on an activity with no content yet is taken (content is optional).
            if merged != .null, let invalid = Self.pushWardContentProblem(merged) { return problem(422, "activity.content_invalid", invalid) }
            // A refused PATCH spends nothing; a taken one is one of the month's updates.
            if let spent = Self.quotaProblem(&s, now: now, spending: true) { return spent }
            if next == nil, activity.state == "preempted" {
                return problem(422, "activity.state_invalid", "activity is preempted: set state to ongoing or ended")
            }
            activity.content = merged
            shownContent = merged
            activity.lastPatched = now
            if let priority = fields["priority"]?.intValue { activity.priority = priority }
            if fields["stale_ttl"] == .null { activity.staleTTL = nil } else if let ttl = fields["stale_ttl"]?.intValue { activity.staleTTL = ttl }
            // No state: the stored one is kept (a new activity stays inactive until told ongoing).
            let target = next ?? activity.state
            shownState = target
            if target == "ongoing", activity.state != "ongoing" {
                activity.since = (activities.values.map(\.since).max() ?? 0) + 1
                let ongoing = activities.filter { $0.key != slug && $0.value.state == "ongoing" }
                if ongoing.count >= Self.pushWardOngoingLimit,
                   let lowest = ongoing.min(by: { ($0.value.priority, $0.value.since) < ($1.value.priority, $1.value.since) }) {
                    activities[lowest.key]?.state = "preempted"
                    evicted = lowest.key
                }
            }
            activity.state = target
            activities[slug] = activity
            return HTTPServerResponse(status: created ? 201 : 200, json: JSONValue.object(["slug": .string(slug), "state": .string(target)]).jsonText,
                                      headers: ["X-Resource-Action": created ? "created" : "updated"])
        }
        if response.status == 200 || response.status == 201 {
            // The preview draws what the phone shows: every PATCH merged in.
            var drawn = fields
            drawn["content"] = shownContent
            show("pushward/" + slug, .object(drawn), ended: shownState == "ended")
            if let evicted { note(["at": .double(0), "activity": .string("pushward/" + evicted), "decision": "evicted (five ongoing)"]) }
        }
        return response
    }

    /// 429 quota.exceeded with its `reset_at` once the free plan's monthly updates are spent; else nil, counting one
    /// update when `spending`.
    static func quotaProblem(_ s: inout State, now: Double, spending: Bool) -> HTTPServerResponse? {
        guard let quota = s.pushWard.monthlyQuota else { return nil }
        guard s.pushWard.updates < quota else {
            return HTTPServerResponse(status: 429, contentType: "application/problem+json", body: Array(JSONValue.object([
                "code": "quota.exceeded", "detail": "quota exceeded for live_activity_updates", "kind": "live_activity_updates",
                "limit": .int(quota), "used": .int(s.pushWard.updates), "reset_at": .string(nextMonthStart(after: now)), "status": 429,
            ]).jsonText.utf8))
        }
        if spending { s.pushWard.updates += 1 }
        return nil
    }

    /// The document's 422 for a body that breaks its schema.
    private func validation(_ message: String) -> HTTPServerResponse {
        HTTPServerResponse(status: 422, contentType: "application/problem+json", body: Array(JSONValue.object([
            "detail": "validation failed", "errors": [["location": .string(String(message.prefix { $0 != ":" })), "message": .string(message)]], "status": 422,
        ]).jsonText.utf8))
    }

    static func splitQuery(_ target: String) -> (path: String, query: [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            query[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return (String(target[..<mark]), query)
    }

    /// The first moment of next month (UTC), as `reset_at` says it.
    static func nextMonthStart(after epoch: Double) -> String {
        let c = Timestamp.components(epoch)
        let (year, month) = c.month == 12 ? (c.year + 1, 1) : (c.year, c.month + 1)
        return Timestamp.iso8601(Double(Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: 1)) * 86_400)
    }

    /// The content an activity shows now (every PATCH merged in), for tests.
    public func pushWardContent(_ slug: String, key: String = "pushward-test-key") -> JSONValue? {
        state.withLock { $0.pushWard.activities[key]?[slug]?.content }
    }

    /// The free plan's updates a month, from now (nil: unlimited).
    public func limitPushWardUpdates(_ quota: Int?) {
        state.withLock { $0.pushWard.monthlyQuota = quota; $0.pushWard.updates = 0 }
    }

    /// What the documented contract refuses in a content, or nil.
    static func pushWardContentProblem(_ content: JSONValue?) -> String? {
        guard let content, let template = content["template"]?.stringValue, pushWardTemplates.contains(template) else {
            return "content.template must be one of " + pushWardTemplates.joined(separator: ", ")
        }
        if let progress = content["progress"], !(progress.doubleValue.map { (0...1).contains($0) } ?? false) {
            return "content.progress must be a number in [0, 1]"
        }
        if content["live_progress"] == .bool(true), content["end_date"] == nil { return "live_progress requires end_date" }
        if let start = content["start_date"]?.doubleValue, let end = content["end_date"]?.doubleValue, start >= end {
            return "start_date must be before end_date"
        }
        // tap_action.url: "any scheme except javascript/data/file/vbscript"; http(s) URLs require a host.
        if let url = content["tap_action"]?["url"]?.stringValue {
            let scheme = url.prefix { $0 != ":" }.lowercased()
            if ["javascript", "data", "file", "vbscript"].contains(scheme) { return "tap_action.url: the \(scheme) scheme is not allowed" }
            if ["http", "https"].contains(scheme), !url.dropFirst(scheme.count).hasPrefix("://") || url.dropFirst(scheme.count + 3).prefix(while: { $0 != "/" }).isEmpty {
                return "tap_action.url: http(s) URLs require a host"
            }
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
        state.withLock { _ = $0.pushWard.activities[key]?.removeValue(forKey: slug) }
    }

    /// Moves PushWard's clock on, for its own ends (`stale_ttl`, a countdown's `end_date`) without waiting.
    public func advancePushWardClock(by seconds: Double) {
        state.withLock { $0.pushWard.clockAhead += seconds }
    }

    /// An activity's state as PushWard holds it (created, ongoing, ended, preempted), for tests.
    public func pushWardState(_ slug: String, key: String = "pushward-test-key") -> String? {
        state.withLock { $0.pushWard.activities[key]?[slug]?.state }
    }

    /// PushWard's ongoing activities for a key, by slug (what the phone shows now).
    public func pushWardOngoing(key: String = "pushward-test-key") -> [String] {
        state.withLock { ($0.pushWard.activities[key] ?? [:]).filter { $0.value.state == "ongoing" }.keys.sorted() }
    }

    func problem(_ status: Int, _ code: String, _ detail: String) -> HTTPServerResponse {
        HTTPServerResponse(status: status, contentType: "application/problem+json",
                           body: Array(JSONValue.object(["code": .string(code), "detail": .string(detail), "status": .int(status)]).jsonText.utf8))
    }
}

extension PushWardSchema: FakedService {
    static let testAccounts = ["pushward-test-key"]

    static func serves(method: String, path: String) -> Bool { path == "/activities" || path.hasPrefix("/activities/") }
    static let routes = "POST /activities, PATCH /activities/SLUG"

    static func answer(_ request: HTTPServerRequest, _ body: JSONValue?, in fake: FakePushService) -> HTTPServerResponse {
        fake.pushWardContract(request, body)
    }

    /// The creation carries no content: only a PATCH of an activity is drawn.
    static func draws(method: String, path: String) -> Bool { method == "PATCH" && path.hasPrefix("/activities/") }

    static func problems(_ body: JSONValue) -> [PayloadIssue] {
        // A merge patch: a null clears a field, it is not one of the content's values.
        let content = body["content"]?.objectValue.map { JSONValue.object($0.filter { $0.value != .null }) } ?? body["content"] ?? .null
        return PayloadNormalizer.normalize(content, as: PushWardSchema.content, path: "content").1
    }
}

/// PushWard's side of the fake: activities per integration key by slug, the monthly quota, the last minute's requests.
struct PushWardFakeState: FakeState {
    var activities: [String: [String: PushWardActivity]] = [:]
    var monthlyQuota: Int?
    var updates = 0
    /// When each request of the last minute came (all from 127.0.0.1: one client address).
    var requests: [Double] = []
    /// Seconds its clock is ahead of the real one (tests move time for its server-side ends).
    var clockAhead: Double = 0
}

extension FakePushService.State {
    var pushWard: PushWardFakeState {
        get { self[PushWardFakeState.self] }
        _modify { yield &self[PushWardFakeState.self] }
    }
}
