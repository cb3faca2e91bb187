import Glibc
import FoundationEssentials
import Platform

/// The filters of time: timestamps, datetimes, durations, relative times, with Home Assistant's semantics.
enum TimeFilters {
    /// `value | filter(args)`, or nil when `filter` is not of this family. `fallback` is the first argument or the
    /// `default` keyword, which several filters return instead of failing.
    static func apply(_ filter: Filter, _ value: TemplateValue, _ args: [TemplateValue], _ keywords: [String: TemplateValue],
                      fallback: TemplateValue?, context: EvaluationContext) throws(EvaluationError) -> TemplateValue? {
        switch filter {
        case .timestampCustom:
            guard let epoch = Conversions.epoch(value, zone: context.timeZone) else {
                if let fallback = keywords["default"] ?? (args.count > 2 ? args[2] : nil) { return fallback }
                throw EvaluationError("timestamp_custom got \(value.typeName) \(value.repr), which is not a timestamp")
            }
            let format = args.first?.text ?? keywords["format_string"]?.text ?? "%Y-%m-%d %H:%M:%S"
            let local = (args.count > 1 ? args[1] : keywords["local"])?.isTruthy ?? true
            let offset = local ? Double(context.timeZone.secondsFromGMT(at: epoch)) : 0
            return .string(StrftimeFormat.format(format, epoch: epoch + offset, utcOffset: Int(offset),
                                                 zoneName: local ? context.timeZone.abbreviation(at: epoch) : "UTC"))
        case .asTimestamp:
            if let epoch = Conversions.epoch(value, zone: context.timeZone) { return .double(epoch) }
            if let fallback { return fallback }
            throw EvaluationError("as_timestamp got \(value.typeName) \(value.repr), which is not a date or time")
        case .asDatetime:
            // A datetime as it is; text keeps the offset it gives, or none (naive); a number is UTC.
            if case .datetime = value { return value }
            // A date at midnight, without a zone (datetime.combine(date, time(0, 0))).
            if case .date(let days) = value { return .datetime(Double(days) * 86_400, offset: TemplateValue.naive) }
            if case .string(let s) = value, let (t, offset) = Timestamp.parseISO8601(s.trimmingSpaces()) {
                return .datetime(t, offset: offset ?? TemplateValue.naive)
            }
            if let epoch = Conversions.epoch(value, zone: context.timeZone) { return .datetime(epoch) }
            if let fallback { return fallback }
            // Home Assistant (since 2024.2) gives None for a string it cannot read, an error for anything else.
            if case .string = value { return TemplateValue.none }
            throw EvaluationError("as_datetime got \(value.typeName) \(value.repr), which is not a date or time")
        case .asTimedelta:
            if let seconds = Conversions.duration(value) { return .timedelta(seconds) }
            if let fallback { return fallback }
            // Home Assistant's as_timedelta gives None for text it cannot read.
            if value.isText { return TemplateValue.none }
            throw EvaluationError("as_timedelta got \(value.typeName) \(value.repr), which is not a duration like 1:25:00")
        case .relativeTime, .timeSince, .timeUntil:
            // Home Assistant's: anything but a datetime comes back as it is, and so does one on the wrong side of now.
            guard case .datetime(let epoch, let offset) = value else { return value }
            let t = TemplateValue.instant(epoch, offset, zone: context.timeZone)
            // A naive datetime is read as local time first, and comes back so when it is on the wrong side of now.
            let shown: TemplateValue = offset == TemplateValue.naive ? .datetime(t, offset: context.timeZone.secondsFromGMT(at: t)) : value
            let precision = filter == .relativeTime ? 1 : ((args.first ?? keywords["precision"])?.integer ?? 1)
            let delta = filter == .timeUntil ? t - context.now : context.now - t
            guard delta >= 0 else { return shown }
            guard let seconds = Int(truncating: delta.rounded(.toNearestOrEven)), seconds >= 0 else { return value }
            return .string(TimeText.since(seconds, precision: precision))
        case .timedeltaString:
            // Home Assistant's timedelta_string(precision=1): a timedelta in words, its sign dropped; anything else as it is.
            guard case .timedelta(let delta) = value else { return value }
            let precision = (args.first ?? keywords["precision"])?.integer ?? 1
            guard let seconds = Int(truncating: Swift.abs(delta).rounded(.toNearestOrEven)) else { return value }
            return .string(TimeText.since(seconds, precision: precision))
        case .todayAt:
            // Local midnight today, at the time given (H:MM or H:MM:SS).
            let text = value.text
            let offset = context.timeZone.secondsFromGMT(at: context.now)
            let local = context.now + Double(offset)
            let midnight = (local / 86_400).rounded(.down) * 86_400 - Double(offset)
            guard !text.isEmpty else { return .datetime(midnight, offset: offset) }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Int($0.trimmingSpaces()) }
            guard parts.count >= 2, parts.count <= 3, let hour = parts[0], let minute = parts[1], (0..<24).contains(hour),
                  (0..<60).contains(minute), parts.count == 2 || parts[2].map({ (0..<60).contains($0) }) == true else {
                throw EvaluationError("could not convert str to datetime: '\(text)'")
            }
            let second = parts.count == 3 ? parts[2]! : 0
            return .datetime(midnight + Double(hour * 3600 + minute * 60 + second), offset: offset)
        case .asLocal:
            guard case .datetime(let epoch, let offset) = value else { throw EvaluationError("as_local needs a datetime, got \(value.typeName) \(value.repr)") }
            // A naive datetime is taken to be local time, as Home Assistant's as_local does.
            let t = TemplateValue.instant(epoch, offset, zone: context.timeZone)
            return .datetime(t, offset: context.timeZone.secondsFromGMT(at: t))
        case .timestampLocal, .timestampUTC:
            // Home Assistant's: a number of seconds, as ISO 8601 in the local zone or UTC.
            guard !value.isText, let seconds = value.number, let epoch = Timestamp.checked(seconds) else {
                if let fallback { return fallback }
                throw EvaluationError("\(filter.rawValue) got \(value.typeName) \(value.repr), which is not a timestamp")
            }
            let offset = filter == .timestampLocal ? context.timeZone.secondsFromGMT(at: epoch) : 0
            return .string(Timestamp.iso8601(epoch, offset: offset))
        default: return nil
        }
    }
}
