/// When an update may go out: after `debounce` of quiet, but no later than `maxWait` after its first unsent change,
/// and never sooner than `minInterval` after the previous push. Pure arithmetic on instants.
///
/// Beyond the timing: `settle` holds updates after a start (so Home Assistant has the activity's push token),
/// `maxPerHour` caps updates in any hour (Apple's budget), `minChange` says what change is worth a push, and
/// `renewAfter` ends and restarts an activity before iOS ends it at eight hours.
public struct UpdateBudget: Sendable, Equatable {
    public var debounce: Duration
    public var maxWait: Duration
    public var minInterval: Duration
    /// No update sooner than this after a start was delivered (nil: the backend's own, `settle(for:)`).
    public var settle: Duration?
    /// At most this many updates in any hour (nil: no cap). Starts and ends are not counted and never held.
    public var maxPerHour: Int?
    /// A change smaller than this is not worth a push (nil: every change is, until the hour's budget runs low; then
    /// `MinChange.tightBudget`).
    public var minChange: MinChange?
    /// Ended and started again with the same content this long after its start (nil: never).
    public var renewAfter: Duration?

    /// Apple's budget for updates without the frequent-updates opt-in, as the community measured it: the cap when a
    /// backend cannot tell.
    public static let applesHourlyBudget = 15
    /// iOS ends a Live Activity after eight hours: renewed ten minutes before.
    public static let defaultRenewAfter = Duration.seconds(8 * 3600 - 600)
    /// How long Home Assistant needs after a start to hold the activity's own push token (the app starts it, then
    /// reports the token through its webhook): an update sooner may open a second activity.
    public static let homeAssistantSettle = Duration.seconds(10)
    /// An update held as not worth a push goes anyway after this long without changes: the last state before a quiet.
    public static let quiet = Duration.seconds(600)

    public init(debounce: Duration = .seconds(2), maxWait: Duration = .seconds(15), minInterval: Duration = .seconds(5)) {
        self.debounce = debounce
        self.maxWait = maxWait
        self.minInterval = minInterval
    }

    /// What a rules file gets when it says nothing: the timing above, Apple's hourly budget, a renewal before eight
    /// hours.
    public static var rulesDefault: UpdateBudget {
        var budget = UpdateBudget()
        budget.maxPerHour = applesHourlyBudget
        budget.renewAfter = defaultRenewAfter
        return budget
    }

    /// The instant the pending update is due, given its first and last unsent change and the last push.
    public func due<I: InstantProtocol>(firstChange: I, lastChange: I, lastPush: I?) -> I where I.Duration == Duration {
        let quiet = lastChange.advanced(by: debounce)
        let capped = firstChange.advanced(by: maxWait)
        let settled = quiet < capped ? quiet : capped
        guard let lastPush else { return settled }
        let allowed = lastPush.advanced(by: minInterval)
        return settled > allowed ? settled : allowed
    }

    /// This budget as a backend of `kind` spends it: the settle time written, or the backend's (Home Assistant needs
    /// one; the others none).
    public func settled(for kind: BackendKind) -> UpdateBudget {
        var budget = self
        budget.settle = settle ?? kind.definition.defaultSettle
        return budget
    }

    /// Of `maxPerHour`, how many left means the budget is tight: a third, at least one.
    public var tightAt: Int { max(1, (maxPerHour ?? 0) / 3) }
}
