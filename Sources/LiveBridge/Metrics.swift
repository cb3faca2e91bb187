public import Dispatcher
import Platform
import Synchronization

/// Counters and the push-latency histogram behind /metrics, in Prometheus' text format.
public final class Metrics: Sendable {
    private struct State {
        var stateChanges = 0
        var renders = 0
        var reconnects = 0
        var connectionsOpened = 0
        var pushes: [PushKey: Int] = [:]
        var latencyBuckets = Array(repeating: 0, count: Metrics.bounds.count)
        var latencyCount = 0
        var latencySum = 0.0
        /// Backends whose last push was refused for good (auth), with the code.
        var failingBackends: [String: String] = [:]
        /// Backends that stopped pushing for a while by the service's limit (PushWard's monthly quota), with why.
        var limitedBackends: [String: String] = [:]
    }

    /// A push counter's labels: kept apart, so counting a push joins no strings (one a push).
    private struct PushKey: Hashable {
        let backend: String
        let target: String
        let outcome: String
    }

    static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    private let state = Locked(State())

    public init() {}

    public func stateChanges(_ n: Int) { state.withLock { $0.stateChanges += n } }
    public func renders(_ n: Int) { state.withLock { $0.renders += n } }
    public func reconnect() { state.withLock { $0.reconnects += 1 } }

    /// One push to `target` (a lane: the backend's name, or `backend/notify.…` for one of its phones) through `backend`.
    /// `limitCode`: a rejection's code, which may stop the backend for a while (`limit(_:)`).
    public func push(backend: String, target: String, outcome: String, seconds: Double, permanentFailure: DeliveryCode?, connectionsOpened: Int = 0,
                     limitCode: DeliveryCode? = nil) {
        state.withLock { s in
            s.connectionsOpened += connectionsOpened
            s.pushes[PushKey(backend: backend, target: target, outcome: outcome), default: 0] += 1
            s.latencyCount += 1
            s.latencySum += seconds
            for (index, bound) in Self.bounds.enumerated() where seconds <= bound { s.latencyBuckets[index] += 1 }
            // Cleared only when there is something to clear: nearly every push is delivered, nearly no backend failing.
            if let permanentFailure {
                s.failingBackends[backend] = permanentFailure.description
            } else if outcome == "delivered", !s.failingBackends.isEmpty {
                s.failingBackends[backend] = nil
            }
            if let limit = limitCode?.limitReason {
                s.limitedBackends[backend] = limit
            } else if outcome == "delivered", !s.limitedBackends.isEmpty {
                s.limitedBackends[backend] = nil
            }
        }
    }

    public var limitedBackends: [String: String] { state.withLock { $0.limitedBackends } }

    public var failingBackends: [String: String] { state.withLock { $0.failingBackends } }

    /// A label's value as Prometheus' text format writes it: `\\`, `"` and a line end escaped (a backend is named by
    /// the rules file, and a name may hold any of them).
    /// By scalars, not by `replacing`: a Character may hold one inside another (`\r\n`, `\\` with a combining mark).
    /// Not `Logger.escaped`: it escapes more than the format's three (a tab, unsafe scalars as `\u`), which the
    /// format does not read back.
    static func label(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == 0x0A }) else { return value }
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The exposition text; `lane` counters come from the dispatcher.
    /// `held` and `renewals` come from the dispatcher too, and `relayRemaining` (pushes left through each device's Home
    /// Assistant relay, by notify service).
    /// `holds`: times an update began to be held, by the budget's reason (max_per_hour, min_interval, …).
    public func text(debounced: Int, deduplicated: Int, retries: Int, stateChanges received: Int? = nil, framesReadInPlace: Int = 0,
                     held: Int = 0, renewals: Int = 0,
                     relayRemaining: [String: Int] = [:], holds: [String: Int] = [:]) -> String {
        state.withLock { s in
            var out = ""
            func counter(_ name: String, _ help: String, _ value: Int) {
                out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
            }
            counter("livebridge_state_changes_total", "Entity state changes received from Home Assistant.", received ?? s.stateChanges)
            counter("livebridge_frames_read_in_place_total", "Frames of entity changes applied where they arrived, not decoded whole.", framesReadInPlace)
            counter("livebridge_renders_total", "Activity payloads rendered.", s.renders)
            counter("livebridge_debounced_total", "Updates replaced by a newer one before sending.", debounced)
            counter("livebridge_deduplicated_total", "Updates not sent because the phone already shows them.", deduplicated)
            counter("livebridge_retries_total", "Pushes tried again.", retries)
            counter("livebridge_held_total", "Updates held back as not worth a push (below min_change, or small while the budget is tight).", held)
            out += "# HELP livebridge_holds_total Times the budget began to hold an activity's next update, by reason.\n# TYPE livebridge_holds_total counter\n"
            for reason in ["max_per_hour", "min_change", "min_interval", "relay_budget", "start_settle"] {
                out += "livebridge_holds_total{reason=\"\(reason)\"} \(holds[reason] ?? 0)\n"
            }
            counter("livebridge_renewals_total", "Activities ended and started again before iOS's eight hours.", renewals)
            counter("livebridge_reconnects_total", "Reconnections to Home Assistant.", s.reconnects)
            counter("livebridge_backend_connections_opened_total", "Connections opened to push backends (kept-alive ones are reused).", s.connectionsOpened)
            out += "# HELP livebridge_pushes_total Pushes by backend, target (a backend or one of its phones) and outcome.\n# TYPE livebridge_pushes_total counter\n"
            for (key, count) in s.pushes.sorted(by: { ($0.key.backend, $0.key.target, $0.key.outcome) < ($1.key.backend, $1.key.target, $1.key.outcome) }) {
                out += "livebridge_pushes_total{backend=\"\(Self.label(key.backend))\",target=\"\(Self.label(key.target))\",outcome=\"\(key.outcome)\"} \(count)\n"
            }
            if !s.limitedBackends.isEmpty {
                out += "# HELP livebridge_backend_limited A backend stopped by its service's limit until it resets (1), by reason.\n"
                out += "# TYPE livebridge_backend_limited gauge\n"
                for backend in s.limitedBackends.keys.sorted() {
                    let reason = s.limitedBackends[backend]!.contains("DEVICE_NOT_REGISTERED") ? "DEVICE_NOT_REGISTERED" : "quota.exceeded"
                    out += "livebridge_backend_limited{backend=\"\(Self.label(backend))\",reason=\"\(reason)\"} 1\n"
                }
            }
            if !relayRemaining.isEmpty {
                out += "# HELP livebridge_relay_pushes_remaining Pushes left today (UTC) through Home Assistant's relay for a phone (500 a day).\n"
                out += "# TYPE livebridge_relay_pushes_remaining gauge\n"
                for device in relayRemaining.keys.sorted() {
                    out += "livebridge_relay_pushes_remaining{device=\"\(Self.label(device))\"} \(relayRemaining[device]!)\n"
                }
            }
            out += "# HELP livebridge_push_latency_seconds Time from handing a push to its backend to the answer.\n"
            out += "# TYPE livebridge_push_latency_seconds histogram\n"
            for (index, bound) in Self.bounds.enumerated() {
                out += "livebridge_push_latency_seconds_bucket{le=\"\(bound)\"} \(s.latencyBuckets[index])\n"
            }
            out += "livebridge_push_latency_seconds_bucket{le=\"+Inf\"} \(s.latencyCount)\n"
            out += "livebridge_push_latency_seconds_sum \(s.latencySum)\nlivebridge_push_latency_seconds_count \(s.latencyCount)\n"
            return out
        }
    }
}
