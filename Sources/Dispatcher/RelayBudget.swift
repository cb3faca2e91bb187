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

    /// The counted pushes of today (UTC).
    private var window: RollingWindow<Double>
    /// When each counted push went today (UTC), oldest first: what `state.json` keeps.
    public var pushes: [Double] { window.times }

    public init(pushes: [Double] = []) { window = RollingWindow(pushes) }

    /// Midnight UTC that starts the day holding `now`.
    public static func dayStart(_ now: Double) -> Double { (now / day).rounded(.down) * day }

    public mutating func record(at now: Double) {
        prune(now)
        window.record(now, keeping: Self.limit * 2)
    }

    /// Forgets pushes of earlier days.
    public mutating func prune(_ now: Double) {
        window.forget(before: Self.dayStart(now))
    }

    /// Pushes left today at `now`.
    public func remaining(at now: Double) -> Int {
        let start = Self.dayStart(now)
        return max(0, Self.limit - window.count(from: start, before: start + Self.day))
    }

    /// What updates may do at `now`; `reservedUntil` says until when (epoch seconds: the next midnight UTC) the
    /// reserve holds them back.
    public func allowance(at now: Double) -> (thin: Bool, reservedUntil: Double?) {
        let left = remaining(at: now)
        guard left >= Self.reserve else { return (true, Self.dayStart(now) + Self.day) }
        return (left < Self.thinBelow, nil)
    }
}
