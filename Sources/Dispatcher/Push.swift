public import LiveActivity

/// One request of an activity's lifecycle, as bytes ready for the backend.
///
/// A class of constants: a lane holds up to five (queued start and end, pending, in flight, the dismissal), and each
/// as a reference keeps a lane small (a lane is copied and scanned; inline, the requests made it 1.8 KiB).
public final class Push: Sendable, Equatable {
    public let kind: PushKind
    /// The exact body; two pushes with equal bodies show the same thing.
    public let body: [UInt8]
    /// A start, an end, or a change to `failed` goes out at once, past the budget.
    public let isUrgent: Bool
    /// The request to send, when the push came from a rule (the lane itself only looks at the body).
    public let request: BackendRequest?

    public init(_ kind: PushKind, body: [UInt8], isUrgent: Bool = false, request: BackendRequest? = nil) {
        self.kind = kind
        self.body = body
        self.isUrgent = isUrgent
        self.request = request
    }

    public static func == (lhs: Push, rhs: Push) -> Bool {
        lhs === rhs || (lhs.kind == rhs.kind && lhs.body == rhs.body && lhs.isUrgent == rhs.isUrgent && lhs.request == rhs.request)
    }

    /// The same content as another kind of push (a start that becomes an update…).
    func retyped(_ kind: PushKind, urgent: Bool) -> Push { Push(kind, body: body, isUrgent: urgent, request: request) }
}

/// How a backend answered a push, in the terms the lifecycle needs.
public enum PushOutcome: Sendable, Equatable {
    case delivered
    /// 409 ACTIVITY_ALREADY_RUNNING on a start: the activity is on the phone already; go on with updates.
    case alreadyRunning
    /// Worth trying again: network errors, timeouts, 429, 5xx. `after` is the server's Retry-After when it gave one.
    case retry(after: Duration?)
    /// 403 FREE_TIER_JOB_LOCKED (or ActivitySmith's fifth activity): wait until one of ours ends, until the lock
    /// expires (`for`: Island Pulse's `expiresAt`), or a long back-off.
    case locked(for: Duration?)
    /// A 4xx that will not get better by trying again; the push is dropped and the code logged.
    case rejected(DeliveryCode)
}
