/// A moment on the continuous clock, kept as the time since a fixed origin: a fixed-layout stand-in for
/// `ContinuousClock.Instant`.
///
/// `ContinuousClock.Instant` is not `@frozen`, so outside the standard library its size is known only at run time:
/// every struct or enum holding one (a lane, its pending update, an optional deadline) is laid out at run time, and each
/// copy, comparison or `Optional` of it goes through runtime metadata and value witnesses. The dispatcher reads a lane's
/// moments on every push; with `ContinuousClock.Instant` that bookkeeping was about 6 % of a push's instructions
/// (callgrind, `docs/performance.md`). `Duration` is `@frozen`, so a `Moment` is two words known at compile time.
public struct Moment: InstantProtocol {
    public typealias Duration = Swift.Duration

    /// Time since `origin`, the first moment anyone asked for.
    public let sinceOrigin: Duration

    private static let origin = ContinuousClock.now

    public init(_ instant: ContinuousClock.Instant) { sinceOrigin = Self.origin.duration(to: instant) }

    private init(sinceOrigin: Duration) { self.sinceOrigin = sinceOrigin }

    public static var now: Moment { Moment(ContinuousClock.now) }

    /// The same moment on `ContinuousClock`, for a sleep.
    public var instant: ContinuousClock.Instant { Self.origin.advanced(by: sinceOrigin) }

    public func advanced(by duration: Duration) -> Moment { Moment(sinceOrigin: sinceOrigin + duration) }

    public func duration(to other: Moment) -> Duration { other.sinceOrigin - sinceOrigin }

    public static func < (a: Moment, b: Moment) -> Bool { a.sinceOrigin < b.sinceOrigin }

    public static func + (a: Moment, b: Duration) -> Moment { a.advanced(by: b) }

    public static func - (a: Moment, b: Duration) -> Moment { Moment(sinceOrigin: a.sinceOrigin - b) }

    public static func - (a: Moment, b: Moment) -> Duration { a.sinceOrigin - b.sinceOrigin }
}
