/// When an update may go out: after `debounce` of quiet, but no later than `maxWait` after its first unsent change,
/// and never sooner than `minInterval` after the previous push. Pure arithmetic on instants.
public struct UpdateBudget: Sendable, Equatable {
    public var debounce: Duration
    public var maxWait: Duration
    public var minInterval: Duration

    public init(debounce: Duration = .seconds(2), maxWait: Duration = .seconds(15), minInterval: Duration = .seconds(5)) {
        self.debounce = debounce
        self.maxWait = maxWait
        self.minInterval = minInterval
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
}
