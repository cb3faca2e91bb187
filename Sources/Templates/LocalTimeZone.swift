import Glibc
import Platform

/// The offset from UTC that local times are written in (`timestamp_custom`, `strftime`), at a given instant.
///
/// `.system` asks glibc, which follows `TZ` or else /etc/localtime with the tz database's rules and history, as Home
/// Assistant's own container does. Foundation's TimeZone needs ICU for named zones, which the daemon does not link.
public struct LocalTimeZone: Sendable {
    private let offset: @Sendable (Double) -> Int
    private let name: @Sendable (Double) -> String

    public init(secondsFromGMT offset: @escaping @Sendable (Double) -> Int,
                abbreviation name: @escaping @Sendable (Double) -> String = { _ in "UTC" }) {
        self.offset = offset
        self.name = name
    }

    /// Seconds east of UTC at `epoch` (seconds since 1970).
    public func secondsFromGMT(at epoch: Double) -> Int { offset(epoch) }

    /// The zone's abbreviation at `epoch` (`CET`, `CEST`): strftime's `%Z`.
    public func abbreviation(at epoch: Double) -> String { name(epoch) }

    /// `%Z` of a datetime shown at `utcOffset`: this zone's abbreviation when the offset is this zone's then, `UTC`
    /// for UTC, else Python's name of a fixed offset (`UTC+02:00`); empty for a naive datetime.
    func zoneName(at epoch: Double, utcOffset: Int?) -> String {
        guard let utcOffset else { return "" }
        if utcOffset == secondsFromGMT(at: epoch) { return abbreviation(at: epoch) }
        if utcOffset == 0 { return "UTC" }
        let minutes = Swift.abs(utcOffset) / 60
        let hh = minutes / 60 < 10 ? "0\(minutes / 60)" : "\(minutes / 60)", mm = minutes % 60 < 10 ? "0\(minutes % 60)" : "\(minutes % 60)"
        return "UTC" + (utcOffset < 0 ? "-" : "+") + hh + ":" + mm
    }

    public static let utc = LocalTimeZone.fixed(secondsFromGMT: 0)

    public static func fixed(secondsFromGMT seconds: Int) -> LocalTimeZone { LocalTimeZone { _ in seconds } }

    /// The machine's zone as glibc resolves it (`localtime_r` is thread-safe and reads the zone once).
    public static let system = LocalTimeZone(secondsFromGMT: { epoch in
        localFields(epoch)?.tm_gmtoff ?? 0
    }, abbreviation: { epoch in
        guard let fields = localFields(epoch), let zone = fields.tm_zone else { return "UTC" }
        return String(cString: zone)
    })

    private static func localFields(_ epoch: Double) -> tm? {
        guard let seconds = Int(truncating: epoch.rounded(.down)) else { return nil }
        var time = time_t(seconds)
        var fields = tm()
        guard localtime_r(&time, &fields) != nil else { return nil }
        return fields
    }
}
