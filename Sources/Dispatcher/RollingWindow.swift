/// Events counted over a span of time ending now, oldest first: the one counter behind every "how many went lately"
/// rule — a lane's `max_per_hour` (on the lane's clock), a service's request allowance (ActivitySmith's 60 a minute),
/// the relay's day per phone (epoch seconds). Pure: the caller gives the times and says where the span starts.
public struct RollingWindow<Time: Comparable & Sendable>: Sendable, Equatable {
    /// When each counted event was (or is booked to be), oldest first.
    public private(set) var times: [Time]

    public init(_ times: [Time] = []) { self.times = times.sorted() }

    public var count: Int { times.count }
    public var isEmpty: Bool { times.isEmpty }
    /// The oldest event still counted.
    public var oldest: Time? { times.first }

    /// Forgets the events before `start` (a span that starts at a moment: the relay's day at midnight UTC).
    public mutating func forget(before start: Time) {
        let expired = times.prefix { $0 < start }.count
        if expired > 0 { times.removeFirst(expired) }
    }

    /// Forgets the events at or before `cutoff` (a trailing span: an hour ago, a minute ago).
    public mutating func forget(through cutoff: Time) {
        let expired = times.prefix { $0 <= cutoff }.count
        if expired > 0 { times.removeFirst(expired) }
    }

    /// Counts an event at `time` (kept in order; a booking may be later than events counted after it was made).
    /// `keeping` bounds what is held: the oldest beyond it are dropped.
    public mutating func record(_ time: Time, keeping bound: Int = .max) {
        let at = times.lastIndex { $0 <= time }.map { $0 + 1 } ?? 0
        times.insert(time, at: at)
        if times.count > bound { times.removeFirst(times.count - bound) }
    }

    /// Events at or after `start` and before `end`.
    public func count(from start: Time, before end: Time) -> Int {
        times.lazy.filter { $0 >= start && $0 < end }.count
    }

    /// Events after `cutoff`.
    public func count(after cutoff: Time) -> Int {
        times.count - times.prefix { $0 <= cutoff }.count
    }

    /// With at most `limit` events in a span: the event whose leaving the span makes room for one more, or nil while
    /// there is room.
    public func blocking(limit: Int) -> Time? {
        times.count < limit ? nil : times[times.count - limit]
    }
}
