import Glibc
import Platform

/// The offset from UTC that local times are written in (`timestamp_custom`, `strftime`), at a given instant.
///
/// `.system` asks glibc, which follows `TZ` or else /etc/localtime with the tz database's rules and history, as Home
/// Assistant's own container does. Foundation's TimeZone needs ICU for named zones, which the daemon does not link.
public struct LocalTimeZone: Sendable {
    private let offset: @Sendable (Double) -> Int

    public init(secondsFromGMT offset: @escaping @Sendable (Double) -> Int) { self.offset = offset }

    /// Seconds east of UTC at `epoch` (seconds since 1970).
    public func secondsFromGMT(at epoch: Double) -> Int { offset(epoch) }

    public static let utc = LocalTimeZone.fixed(secondsFromGMT: 0)

    public static func fixed(secondsFromGMT seconds: Int) -> LocalTimeZone { LocalTimeZone { _ in seconds } }

    /// The machine's zone as glibc resolves it (`localtime_r` is thread-safe and reads the zone once).
    public static let system = LocalTimeZone { epoch in
        guard let seconds = Int(truncating: epoch.rounded(.down)) else { return 0 }
        var time = time_t(seconds)
        var fields = tm()
        guard localtime_r(&time, &fields) != nil else { return 0 }
        return fields.tm_gmtoff
    }
}
