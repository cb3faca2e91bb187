/// A code a service answers with that LiveBridge acts on, and what it means: the dispatcher reads the meaning, never
/// the service's words. Each service lists its own in its definition (`BackendDefinition.codes`), so a new service
/// with codes of its own touches only its own files.
public struct ServiceCode: Sendable, Equatable {
    public enum Meaning: Sendable, Equatable {
        /// A start for an activity the phone shows: taken as delivered, its content sent again as an update.
        case alreadyRunning
        /// One active activity at a time on this plan: the start waits for the other to end (or the lock's expiry).
        case oneAtATime
        /// The app has not registered the ID yet: refused, and said until it is.
        case notRegistered
        /// Wrong credentials: no push to this backend goes until the rules change.
        case credentialsRefused
        /// The plan's allowance is spent for a while.
        case allowanceSpent
        /// The service no longer knows the activity.
        case activityGone
        /// The key may not touch this activity.
        case keyRestricted
        /// The key lacks a permission the request needs.
        case permissionMissing
        /// Too many activities at once.
        case tooManyActivities
        /// The update was taken but is not shown.
        case paused
    }

    /// As the service spells it: what logs, metrics and the status page show.
    public let text: String
    public let meaning: Meaning
    /// The status it comes with, as documented: with another, the code means nothing to LiveBridge (nil: any).
    public let status: Int?
    /// What to do about it, for the log (nil: the code says it).
    public let explanation: String?
    /// Why it stops the backend for a while, for the status page (nil: it does not).
    public let limitReason: String?

    public init(_ text: String, _ meaning: Meaning, status: Int? = nil, explanation: String? = nil, limitReason: String? = nil) {
        self.text = text
        self.meaning = meaning
        self.status = status
        self.explanation = explanation
        self.limitReason = limitReason
    }
}
