import FoundationEssentials
import JSON
import LiveActivity
import Platform
import WebSocketTransport

/// Island Pulse as its reference documents it: `POST /notify` with the unique ID as a Bearer token and the job's whole
/// body (`job_id`, `action` start|update|end); 409 on a running job's start; the free tier's single job (403
/// `FREE_TIER_JOB_LOCKED` with `expiresAt`); an ID its app has not registered, 404 `DEVICE_NOT_REGISTERED`.
extension IslandPulseSchema: FakedService {
    static let testAccounts = ["pulse-test-id"]

    static func serves(method: String, path: String) -> Bool { method == "POST" && path == "/notify" }
    static let routes = "POST /notify"

    static func answer(_ request: HTTPServerRequest, _ body: JSONValue?, in fake: FakePushService) -> HTTPServerResponse {
        let header = request.headers["authorization"] ?? ""
        guard header.hasPrefix("Bearer "), let plan = fake.plan(String(header.dropFirst(7)), at: .islandpulse) else {
            return fake.error(400, "MISSING_UNIQUE_ID", "Missing or invalid Bearer token")
        }
        let token = String(header.dropFirst(7))
        guard plan != .unregistered else {
            return fake.error(404, "DEVICE_NOT_REGISTERED", "No device registered for this unique ID")
        }
        guard let job = body?["job_id"]?.stringValue, !job.isEmpty else { return fake.error(400, "MISSING_JOB_ID", "job_id missing") }
        guard job.count <= 64, job.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            return fake.error(400, "INVALID_JOB_ID", "job_id format invalid")
        }
        let action = body?["action"]?.stringValue ?? "update"
        guard ["start", "update", "end"].contains(action) else { return fake.error(400, "INVALID_ACTION", "action must be start, update or end") }
        return fake.state.withLock { s -> HTTPServerResponse in
            var running = s.islandPulse.runningJobs[token] ?? []
            defer { s.islandPulse.runningJobs[token] = running }
            switch action {
            case "end":
                running.remove(job)
                s.islandPulse.jobStarts[token + "/" + job] = nil
            default:
                if action == "start", running.contains(job) {
                    return fake.error(409, "ACTIVITY_ALREADY_RUNNING", "A Live Activity for this job_id is already running")
                }
                if plan == .freeTier, !running.contains(job), let other = running.first {
                    // The reference names `expiresAt` but not its form or value: taken here as ISO 8601, the
                    // locked job's start plus a Live Activity's 8 hours.
                    let expires = (s.islandPulse.jobStarts[token + "/" + other] ?? Date().timeIntervalSince1970) + 8 * 3600
                    return HTTPServerResponse(status: 403, json: JSONValue.object([
                        "error": "FREE_TIER_JOB_LOCKED", "message": .string("Free tier: \(other) is already active"),
                        "expiresAt": .string(Timestamp.iso8601(expires)),
                    ]).jsonText)
                }
                if running.insert(job).inserted { s.islandPulse.jobStarts[token + "/" + job] = Date().timeIntervalSince1970 }
            }
            return HTTPServerResponse(status: 200, json: #"{"ok":true}"#)
        }.also { response in
            if response.status == 200, let body { fake.show("islandpulse/" + job, body, ended: action == "end") }
        }
    }

    static func problems(_ body: JSONValue) -> [PayloadIssue] {
        PayloadNormalizer.normalize(body, as: .object(IslandPulseSchema.body)).1
    }
}

/// The jobs running per token, and when each started.
struct IslandPulseFakeState: FakeState {
    var runningJobs: [String: Set<String>] = [:]  // token → job ids
    var jobStarts: [String: Double] = [:]  // token + "/" + job → when it started (seconds since 1970)
}

extension FakePushService.State {
    var islandPulse: IslandPulseFakeState {
        get { self[IslandPulseFakeState.self] }
        _modify { yield &self[IslandPulseFakeState.self] }
    }
}
