/// Which of a lane's holds are news. A lane that keeps hitting the same hold (an entity changing every second under a
/// `min_interval` of a minute) holds before every push; saying so at info each time doubles the log without telling
/// anything new. A hold is news when its reason differs from the last one told, or when a push went out unheld since
/// (the lane had gone quiet): then it is said where people look; a repeat is said at debug.
struct HoldTelling: Sendable, Equatable {
    private var told: ActivityLane.Hold?
    private var heldSincePush = false

    /// A hold began: true when it repeats the last one told, with no unheld push between.
    mutating func began(_ reason: ActivityLane.Hold) -> Bool {
        defer { told = reason; heldSincePush = true }
        return told == reason
    }

    /// A push reached the service: if nothing held it since the last one, the next hold is news again.
    mutating func pushed() {
        if !heldSincePush { told = nil }
        heldSincePush = false
    }
}
