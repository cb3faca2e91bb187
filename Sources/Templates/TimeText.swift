import Glibc
import FoundationEssentials
import Platform

/// Home Assistant's "2 hours", "1 day 3 hours" (dt_util._get_timestring): the largest units first, the last rounded.
enum TimeText {
    static let units: [(name: String, seconds: Int)] = [("year", 365 * 86_400), ("month", 30 * 86_400), ("day", 86_400),
                                                        ("hour", 3600), ("minute", 60), ("second", 1)]

    /// Home Assistant 2026's `_get_timestring`: rounded at the last unit shown first, so a round-up carries into the
    /// larger units (23:59:55 is "1 day", not "24 hours"); twelve rounded months end the year.
    static func since(_ total: Int, precision: Int) -> String {
        guard total != 0 else { return "0 seconds" }
        func counted(_ n: Int, _ unit: String) -> String { n == 1 ? "1 \(unit) " : "\(n) \(unit)s " }
        let year = units[0].seconds, month = units[1].seconds
        var timediff = total, remainder = total, used = 0
        for unit in units where remainder >= unit.seconds {
            used += 1
            if used == precision {
                let months = (timediff % year) / month
                let (step, overflow) = Int((Double(remainder) / Double(unit.seconds)).rounded(.toNearestOrEven)).multipliedReportingOverflow(by: unit.seconds)
                if !overflow { timediff = timediff &+ step - remainder }
                let roundedMonths = (timediff % year) / month
                if roundedMonths >= 12, months < 12 || unit.seconds == month { timediff = timediff &+ year - timediff % year }
                break
            }
            remainder %= unit.seconds
        }
        var out = ""
        used = 0
        for unit in units where timediff >= unit.seconds {
            used += 1
            if used == precision {
                return (out + counted(Int((Double(timediff) / Double(unit.seconds)).rounded(.toNearestOrEven)), unit.name)).trimmingWhitespace()
            }
            let whole = timediff / unit.seconds
            out += counted(whole, unit.name)
            timediff -= whole * unit.seconds
        }
        return out.trimmingWhitespace()
    }
}
