public import JSON
import Platform

/// What a payload shows, split into what a small change can move and everything else: its progress (as a fraction),
/// the instants its timers count to or from (Aivi `time_until`/`time_since` values, Home Assistant's `when`), and a
/// digest of the rest. Two payloads with the same rest differ only by how far the bar moved and how far the finish
/// time drifted: `min_change` decides whether that is worth a push. Pure.
public struct PayloadMeasure: Sendable, Equatable {
    /// FNV-1a of the body with the progress and timer values taken out.
    public let skeleton: String
    public let progress: Double?
    /// Epoch seconds, in the order they appear.
    public let times: [Double]

    public init(_ request: BackendRequest) {
        var body = request.body
        // Each service says where its bar and timers are (`BackendDefinition.movingParts`); one that does not know
        // tells none apart, and every change matters.
        let moving = request.kind.definition.movingParts(&body)
        progress = moving.progress
        times = moving.times
        skeleton = ContentDigest.of(body.jsonBytes)
    }

    /// What of a body a small change can move, taken out of it: the bar as a fraction and the timers' instants.
    public struct MovingParts: Sendable {
        public var progress: Double?
        public var times: [Double]
        public init(progress: Double? = nil, times: [Double] = []) {
            self.progress = progress
            self.times = times
        }
    }

    /// A `{content: …}` body's moving parts (Aivi's and those shaped like it): `progress` (a number or `{value}`)
    /// and the Values counting to or from an instant; `timeKey`, a field holding an instant besides.
    public static func contentParts(_ body: inout JSONValue, timeKey: String? = nil) -> MovingParts {
        var parts = MovingParts()
        guard case .object(var content)? = body["content"] else { return parts }
        if let value = content["progress"]?.doubleValue {
            parts.progress = value
            content["progress"] = .null
        } else if case .object(var bar)? = content["progress"], let value = bar["value"]?.doubleValue {
            parts.progress = value
            bar["value"] = .null
            content["progress"] = .object(bar)
        }
        if let timeKey, let end = content[timeKey]?.doubleValue {
            parts.times.append(end)
            content[timeKey] = .null
        }
        var outer = body.objectValue ?? [:]
        outer["content"] = Self.maskTimers(.object(content), into: &parts.times)
        body = .object(outer)
        return parts
    }

    /// Aivi Values counting to or from an instant (`{value, formatter: time_until|time_since}`), anywhere in the
    /// content: their instants are taken out (ISO 8601 or epoch seconds).
    private static func maskTimers(_ value: JSONValue, into times: inout [Double]) -> JSONValue {
        switch value {
        case .object(var object):
            if let formatter = object["formatter"]?.stringValue, formatter == "time_until" || formatter == "time_since",
               let instant = object["value"].flatMap(epoch) {
                times.append(instant)
                object["value"] = .null
                return .object(object)
            }
            for key in object.keys.sorted() { object[key] = maskTimers(object[key]!, into: &times) }
            return .object(object)
        case .array(let items):
            return .array(items.map { maskTimers($0, into: &times) })
        default:
            return value
        }
    }

    private static func epoch(_ value: JSONValue) -> Double? {
        if let number = value.doubleValue { return number }
        return value.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
    }

    /// Whether going from `shown` to this is worth a push under `threshold`: anything but the bar and the timers
    /// changed, the bar appeared or went, it moved by `threshold.progress` or more, or a timer's instant drifted by
    /// `threshold.eta` or more.
    public func matters(after shown: PayloadMeasure, threshold: MinChange) -> Bool {
        if skeleton != shown.skeleton || times.count != shown.times.count { return true }
        switch (progress, shown.progress) {
        case (nil, nil): break
        case (let now?, let before?): if Self.moved(abs(now - before), threshold.progress) { return true }
        default: return true
        }
        let drift = threshold.eta.secondsValue
        return zip(times, shown.times).contains { Self.moved(abs($0 - $1), drift) }
    }

    /// A move at least `threshold` (0: any move at all).
    private static func moved(_ delta: Double, _ threshold: Double) -> Bool { delta > 1e-12 && delta >= threshold - 1e-9 }
}

/// The smallest change worth a push: a progress delta (a fraction: 0.05 is five points) and a drift of a timer's
/// instant (a re-estimated finish time).
public struct MinChange: Sendable, Equatable {
    public var progress: Double
    public var eta: Duration

    public init(progress: Double, eta: Duration) {
        self.progress = progress
        self.eta = eta
    }

    /// What a tight budget keeps when the rule names none: five points of progress, three minutes of drift (the
    /// community blueprints' habit).
    public static let tightBudget = MinChange(progress: 0.05, eta: .seconds(180))
}
