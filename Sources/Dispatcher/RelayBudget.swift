/// Home Assistant's push relay (home-assistant/mobile-apps-fcm-push): 500 delivered pushes per phone per UTC
/// calendar day, reset at midnight UTC, shared with every other notification to that phone. Live Activity starts,
/// updates and ends count; plain commands (a `clear_notification` without an activity, `request_location_update`…)
/// do not. Past it core only logs a warning and the phone receives nothing, so LiveBridge counts for itself — its own
/// pushes and the other notifications core sends to that phone — and as the day's quota runs low updates thin out
/// (only those that matter), and the last pushes are kept for starts and ends. Pure: times are epoch seconds (the
/// count survives restarts in `state.json`).
public struct RelayBudget: Sendable, Equatable {
    public static let limit = 500
    public static let day = 86_400.0
    /// Fewer left than this: only updates that matter.
    public static let thinBelow = 100
    /// Fewer left than this: starts and ends only.
    public static let reserve = 25

    /// When each counted push went today (UTC), oldest first.
    public private(set) var pushes: [Double]

    public init(pushes: [Double] = []) { self.pushes = pushes.sorted() }

    /// Midnight UTC that starts the day holding `now`.
    public static func dayStart(_ now: Double) -> Double { (now / day).rounded(.down) * day }

    public mutating func record(at now: Double) {
        prune(now)
        pushes.append(now)
        if pushes.count > Self.limit * 2 { pushes.removeFirst(pushes.count - Self.limit * 2) }
    }

    /// Forgets pushes of earlier days.
    public mutating func prune(_ now: Double) {
        let start = Self.dayStart(now)
        let expired = pushes.prefix { $0 < start }.count
        if expired > 0 { pushes.removeFirst(expired) }
    }

    /// Pushes left today at `now`.
    public func remaining(at now: Double) -> Int {
        let start = Self.dayStart(now)
        return max(0, Self.limit - pushes.filter { $0 >= start && $0 < start + Self.day }.count)
    }

    /// What updates may do at `now`; `reservedUntil` says until when (epoch seconds: the next midnight UTC) the
    /// reserve holds them back.
    public func allowance(at now: Double) -> (thin: Bool, reservedUntil: Double?) {
        let left = remaining(at: now)
        guard left >= Self.reserve else { return (true, Self.dayStart(now) + Self.day) }
        return (left < Self.thinBelow, nil)
    }
}
