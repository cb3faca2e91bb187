#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The end of a time slice that work on a loop thread gives itself (the event loop's jobs, the engine's evaluation in
/// parts), read on the coarse monotonic clock.
///
/// The slice is checked before every piece of work, tens of thousands of times a second in a flood: the coarse clock
/// is read from memory the kernel updates on each tick, where the precise one costs tens of nanoseconds in a VM. Its
/// steps (a tick, 1–4 ms) are finer than the slices it ends (10–20 ms), whose purpose is only that the socket is not
/// left unread for long.
public struct SliceDeadline: Sendable {
    /// Nanoseconds on the coarse monotonic clock.
    private let end: Int64

    /// `duration` from now (a negative one has passed already).
    public init(after duration: Duration) {
        // Bounded first, to ±31 years: past any slice, and no overflow (a Duration holds 128 bits).
        end = Self.now() + min(max(duration, .zero - Self.longest), Self.longest).wholeNanoseconds
    }

    private static let longest = Duration.seconds(1_000_000_000)

    /// Whether the slice is over.
    public var isPast: Bool { Self.now() >= end }

    private static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
