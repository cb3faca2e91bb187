/// Home Assistant's push relay: 500 pushes per device per rolling 24 hours, starts, updates and ends alike. Past it
/// core only logs a warning and the phone receives nothing, so LiveBridge counts for itself: as the quota runs low
/// updates thin out (only those that matter), and the last pushes are kept for starts and ends. Pure: times are epoch
/// seconds (the window survives restarts in `state.json`).
public struct RelayBudget: Sendable, Equatable {
    public static let limit = 500
    public static let window = 24.0 * 3600
    /// Fewer left than this: only updates that matter.
    public static let thinBelow = 100
    /// Fewer left than this: starts and ends only.
    public static let reserve = 25

    /// When each counted push went, oldest first.
    public private(set) var pushes: [Double]

    public init(pushes: [Double] = []) { self.pushes = pushes.sorted() }

    public mutating func record(at now: Double) {
        prune(now)
        pushes.append(now)
    }

    public mutating func prune(_ now: Double) {
        let expired = pushes.prefix { $0 + Self.window <= now }.count
        if expired > 0 { pushes.removeFirst(expired) }
    }

    /// Pushes left in the window at `now`.
    public func remaining(at now: Double) -> Int {
        Self.limit - pushes.filter { $0 + Self.window > now }.count
    }

    /// What updates may do at `now`; `reserved` says until when (epoch seconds) the reserve holds them back.
    public func allowance(at now: Double) -> (thin: Bool, reservedUntil: Double?) {
        let live = pushes.filter { $0 + Self.window > now }
        let left = Self.limit - live.count
        guard left >= Self.reserve else {
            // Updates may go again once enough pushes leave the window to rise above the reserve.
            let leaving = Self.reserve - left
            return (true, live[min(leaving - 1, live.count - 1)] + Self.window)
        }
        return (left < Self.thinBelow, nil)
    }
}
