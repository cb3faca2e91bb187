import FoundationEssentials
public import HTTPClient
import JSON
public import LiveActivity
import Platform

/// PushWard (pushward.app): activities by slug at `{base}/activities`, the integration key as a Bearer token. A start
/// first creates the activity (`POST /activities`, an upsert that answers 201 for a new or existing slug), then sends
/// its content (`PATCH /activities/{slug}`, state `ongoing`); updates and ends are that PATCH alone (`ended` ends it).
/// Its errors are RFC 9457 problems with a `code`: 401 (the key, for good), 403 (its policy), 409 (25 activities per
/// user: `activity.limit_exceeded`), 429 (200 requests a minute per address, with Retry-After), 5xx. The 200 a minute
/// are also kept on our side (`RequestWindow`, shared by the backend's lanes), so a burst is spread, not refused.
public struct PushWardBackend: PushBackend, HTTPExchanges {
    public func wire(_ request: BackendRequest, kind: PushKind) -> [HTTPRequest] {
        var exchanges: [HTTPRequest] = []
        if kind == .start, let creation = request.creation {
            exchanges.append(HTTPRequest(method: "POST", url: baseURL + "/activities", headers: headers("POST"), body: creation.jsonBytes))
        }
        // A start as it goes: the fields of an earlier run nulled (what a later frame sends depends on what was shown).
        exchanges.append(kind == .start ? patched(request, fresh: true, startsIt: false) : httpRequest(for: request))
        if let ended = request.dismissalRequest { exchanges.append(httpRequest(for: ended)) }
        return exchanges
    }

    public let name: String
    public let baseURL: String
    let token: String
    public let allowsOneActiveJob = false
    public var sendsAtOnce: Int? { HTTPClient.transfersAtOncePerHost }
    let sender: HTTPSender
    /// The content last delivered per slug: the next frame nulls what it no longer has (PATCH is a merge patch).
    private let shown = Locked<[String: JSONValue]>([:])
    /// Until when (epoch seconds: the next month, UTC) the free plan's monthly quota is spent: nothing is sent.
    /// Shared with the other backends using the same key (`pacers`): the quota is the account's.
    let quotaSpentUntil: Locked<Double?>

    /// `sender`: its requests' way out, paced as the factory made it. `pacers`: where the backends of one key share the
    /// monthly quota's stop.
    public init(name: String, baseURL: String, token: String, sender: HTTPSender, pacers: PacerRegistry? = nil) {
        self.name = name
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.sender = sender
        // The monthly quota is the account's, whatever the allowance is counted by.
        self.quotaSpentUntil = pacers?.spentUntil(PacerRegistry.key(PushWardSchema.definition, baseURL: baseURL, token: token)) ?? Locked(nil)
    }

    /// Paced to its documented allowance (or `window`), with the pacer `pacers` shares between backends on one address.
    public init(name: String, baseURL: String, token: String, client: HTTPClient, window: RequestWindow? = nil, pacers: PacerRegistry? = nil) {
        self.init(name: name, baseURL: baseURL, token: token,
                  sender: .paced(for: PushWardSchema.definition, baseURL: baseURL, token: token, client: client, pacers: pacers, window: window),
                  pacers: pacers)
    }

    /// A PATCH is a JSON merge patch, and says so (its OpenAPI document's media type).
    private func headers(_ method: String) -> [(String, String)] {
        [("Authorization", "Bearer \(token)"), ("Content-Type", method == "PATCH" ? "application/merge-patch+json" : "application/json")]
    }

    public func httpRequest(for request: BackendRequest) -> HTTPRequest {
        HTTPRequest(method: request.method, url: baseURL + request.target, headers: headers(request.method), body: request.bodyBytes)
    }

    nonisolated(nonsending) public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        if let refused = DeliveryReport.invalidTarget(request) { return refused }
        let now = Date().timeIntervalSince1970
        if let until = quotaSpentUntil.withLock({ $0 }), now < until {
            return DeliveryReport(.rejected(Self.code(.allowanceSpent)), code: Self.code(.allowanceSpent))
        }
        if kind == .start, let creation = request.creation, let refused = await create(creation, kind: kind, now: now) { return refused }
        let slug = Self.slug(request)
        let wasShown = shown.withLock { $0[slug] != nil }
        // The first update this process sends for an activity (after a restart) says ongoing: one created but never
        // started (a restart between a start's two requests) shows.
        let (report, answer) = await sendReading(patched(request, fresh: kind == .start, startsIt: kind == .update && !wasShown), kind: kind)
        if let stopped = quotaStop(report, answer, now: now) { return stopped }
        if report.outcome == .delivered {
            shown.withLock { $0[slug] = kind == .end ? nil : request.body["content"] }
        }
        // An end for an activity PushWard no longer has: it ended it itself (its end_date, stale_ttl) and let it go.
        // Nothing is left on the phone to end; creating it again would show it as ongoing just to end it.
        if kind == .end, report.status == 404, report.code?.meaning == .activityGone {
            shown.withLock { $0[slug] = nil }
            return DeliveryReport(.delivered, status: 404, code: Self.code(.activityGone))
        }
        guard kind == .update, report.status == 404, report.code?.meaning == .activityGone, let creation = request.creation else { return report }
        // An update for an activity PushWard no longer has. Shown by this process, it was ended by PushWard itself (a
        // countdown's end, stale_ttl) and deleted after ended_ttl: starting it again would put back on the phone what
        // the service took off, so it is refused (not retried) and the next start creates it anew. Unknown to this
        // process (a restart, perhaps between a start's two requests), it is created and started, rather than lose it.
        if wasShown {
            return DeliveryReport(.rejected(Self.code(.activityGone)), status: 404, code: Self.code(.activityGone))
        }
        if let refused = await create(creation, kind: kind, now: now) { return refused }
        let restarted = await send(patched(request, fresh: true, startsIt: true), kind: kind)
        if restarted.outcome == .delivered { shown.withLock { $0[slug] = request.body["content"] } }
        return restarted
    }

    /// Creates (upserts) the activity; nil when it was, else the report to give: a spent quota, a 403 with its fix, or
    /// the failure.
    private func create(_ creation: JSONValue, kind: PushKind, now: Double) async -> DeliveryReport? {
        let (created, answer) = await createReading(creation, kind: kind)
        if let stopped = quotaStop(created, answer, now: now) { return stopped }
        if created.status == 403 { return Self.forbidden(created) }
        return created.outcome == .delivered ? nil : created
    }

    /// PushWard's code with this meaning.
    static func code(_ meaning: ServiceCode.Meaning) -> DeliveryCode { .known(meaning, of: PushWardSchema.definition) }

    static func slug(_ request: BackendRequest) -> String { String(request.target.dropFirst("/activities/".count)) }

    /// The free plan's updates for the month are spent (429 quota.exceeded, on a create as on an update): retrying
    /// only burns requests until it resets, when the answer says (`reset_at`, within a month and a day), else at the
    /// next month's start. Nil for any other answer.
    private func quotaStop(_ report: DeliveryReport, _ answer: [UInt8]?, now: Double) -> DeliveryReport? {
        guard report.status == 429, report.code?.meaning == .allowanceSpent else { return nil }
        let said = answer.flatMap { (try? JSONParser.parse($0))?["reset_at"]?.stringValue }
            .flatMap { Timestamp.epoch(fromISO8601: OutsideText.bounded($0, limit: 64)) }
            .flatMap { $0 > now && $0 < now + 32 * 86_400 ? $0 : nil }
        quotaSpentUntil.withLock { $0 = said ?? Self.nextMonth(after: now) }
        return DeliveryReport(.rejected(Self.code(.allowanceSpent)), status: 429, code: Self.code(.allowanceSpent))
    }

    /// A create refused with 403, with its fix: the key lacks the activity:manage scope (its document's plain 403),
    /// or is restricted to other slugs (`integration_key.slug_invalid`).
    static func forbidden(_ created: DeliveryReport) -> DeliveryReport {
        if let code = created.code, code.meaning == .keyRestricted { return DeliveryReport(.rejected(code), status: 403, code: code) }
        return DeliveryReport(.rejected(code(.permissionMissing)), status: 403, code: created.code)
    }

    /// The PATCH with the content as a merge patch over what was shown: fields the frame dropped sent as `null`. With
    /// nothing shown by this process (a start: PushWard keeps an ended activity's content and the create is an upsert;
    /// the first update after a restart), every field LiveBridge may send and this frame lacks is nulled, so nothing of
    /// an earlier run stays on the phone. `startsIt`: said `ongoing` (an update that must show).
    private func patched(_ request: BackendRequest, fresh: Bool, startsIt: Bool) -> HTTPRequest {
        guard case .object(var body) = request.body, case .object(var content)? = request.body["content"] else { return httpRequest(for: request) }
        if !fresh, let previous = shown.withLock({ $0[Self.slug(request)] }) {
            body["content"] = MergePatch.replacing(previous, with: .object(content))
        } else {
            for name in PushWardSchema.contentFieldNames where content[name] == nil { content[name] = .null }
            body["content"] = .object(content)
        }
        if startsIt { body["state"] = "ongoing" }
        return HTTPRequest(method: request.method, url: baseURL + request.target, headers: headers(request.method), body: JSONValue.object(body).jsonBytes)
    }

    /// Midnight UTC on the first of the month after `now`, when PushWard's monthly quota starts again.
    static func nextMonth(after now: Double) -> Double {
        let c = Timestamp.components(now)
        let (year, month) = c.month == 12 ? (c.year + 1, 1) : (c.year, c.month + 1)
        return Double(Timestamp.daysSinceEpoch(year: Int64(year), month: Int64(month), day: 1)) * 86_400
    }

    private func createReading(_ creation: JSONValue, kind: PushKind) async -> (report: DeliveryReport, body: [UInt8]?) {
        await sendReading(HTTPRequest(method: "POST", url: baseURL + "/activities", headers: headers("POST"), body: creation.jsonBytes), kind: kind)
    }

    private func send(_ http: HTTPRequest, kind: PushKind) async -> DeliveryReport {
        await sendReading(http, kind: kind).report
    }

    /// The report and the answer's body, for what a report does not carry (a quota's `reset_at`).
    private func sendReading(_ http: HTTPRequest, kind: PushKind) async -> (report: DeliveryReport, body: [UInt8]?) {
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await sender.send(http)) } catch { result = .failure(error) }
        return (HTTPOutcome.classify(result, kind: kind, service: PushWardSchema.definition, secrets: [token]), try? result.get().body)
    }
}

extension PushWardSchema: TransportService {
    public static func transport(_ parts: TransportParts) -> any PushBackend {
        PushWardBackend(name: parts.name, baseURL: parts.baseURL, token: parts.token, sender: parts.sender(for: definition), pacers: parts.pacers)
    }
}
