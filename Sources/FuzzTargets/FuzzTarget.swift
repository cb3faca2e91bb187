import Dispatcher
import Glibc
import HomeAssistant
import JSON
import LiveActivity
import Rules

/// libFuzzer targets (`make fuzz`): what comes from outside the daemon, fed hostile bytes. Each must return
/// normally for every input: a trap, an overflow or a sanitizer report is a finding.
///
/// Built into `LiveBridgeFuzz` with `-sanitize=fuzzer,address`; `make test` replays the kept corpus through them.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The rules loader: YAML (anchors, tags, includes of files that do not exist) and the templates in it.
    case rules
    /// The JSON reader: full parse and the validating skip must agree.
    case json
    /// Home Assistant's frames: the envelope, then snapshot/diff events into the entity store.
    case messages
    /// Templates over hostile states: the first line is a template, each further line an entity's state.
    case templates
    /// `state.json` through the loader's checks: no entry may come out with a clear its backend would never send.
    case stateFile
    /// A `livebridge_activity` event's data through the event path's checks: no request may leave its backend's grammar.
    case events

    public func run(_ bytes: [UInt8]) {
        switch self {
        case .rules:
            let text = String(decoding: bytes, as: UTF8.self)
            _ = RulesLoader.load(text: text, file: "/nonexistent/livebridge-fuzz/livebridge.yaml")
        case .json:
            let parsed = try? JSONParser.parse(bytes)
            let skipped = bytes.withUnsafeBufferPointer { buffer -> Bool in
                var reader = JSONReader(buffer)
                return (try? reader.skipValue()) != nil && (try? reader.expectEnd()) != nil
            }
            if (parsed != nil) != skipped { fatalError("parse and skip disagree on \(bytes)") }
            if let parsed { _ = parsed.jsonText }
        case .messages:
            guard let messages = try? ServerMessage.decode(frame: bytes) else { return }
            var store = EntityStore()
            store.share(entityIDs: ["sensor.a", "sensor.b"])
            for case .event(_, let event) in messages {
                _ = try? store.replace(withSnapshot: event)
                _ = try? store.apply(event)
                for state in store.states.values { _ = state.jsonLine }
            }
        case .templates:
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            guard let source = lines.first, let template = try? Template(String(source)) else { return }
            var states: [String: EntityState] = [:]
            for (index, line) in lines.dropFirst().prefix(8).enumerated() {
                let id = "sensor.s\(index)"
                states[id] = EntityState(entityID: id, state: String(line), attributes: ["value": .string(String(line))], lastChanged: 1_795_348_800)
            }
            for now in [0.0, 1_795_348_800, -62_135_596_800, 253_402_300_799] {
                _ = (try? template.evaluate(in: EvaluationContext(states: states, now: now, timeZone: .utc)))?.text
            }
        case .stateFile:
            let now = 1_795_348_800.0
            guard let state = DeliveryState.decode(bytes, now: now, warn: { _ in }) else { return }
            for (key, entry) in state.entries {
                if let started = entry.started, abs(started - now) > 7 * 86_400 { fatalError("\(key): started \(started) kept") }
                guard let clear = entry.dismissal else { continue }
                if !clear.kind.methods.contains(clear.method) { fatalError("\(key): method \(clear.method) kept for \(clear.kind)") }
                if let problem = clear.kind.targetProblem(clear.target) { fatalError("\(key): \(problem)") }
                if abs(clear.at - now) > 7 * 86_400 { fatalError("\(key): at \(clear.at) kept") }
            }
        case .events:
            guard let data = try? JSONParser.parse(bytes), case .success(let event) = ActivityEvent.decode(data, rules: Self.eventRules) else { return }
            if let problem = event.backend.kind.idProblem(event.activity) { fatalError("accepted: \(problem)") }
            for (_, request) in event.requests {
                if !request.kind.methods.contains(request.method) { fatalError("method \(request.method) for \(request.kind)") }
                if let problem = request.kind.targetProblem(request.target) { fatalError("target: \(problem)") }
                _ = request.bodyBytes
            }
        }
    }

    /// One backend of each kind, the first the default: what the `events` target decodes against.
    static let eventRules: RulesFile = {
        let text = """
            backends:
              aivi: { type: aivi, token: t }
              pulse: { type: islandpulse, token: p, tier: free }
              phone: { type: homeassistant, service: [notify.mobile_app_a, notify.mobile_app_b] }
              ward: { type: pushward, token: w }
              smith: { type: activitysmith, token: s }
            defaults: { backend: aivi }
            """
        guard case .success(let rules) = RulesLoader.load(text: text, file: "/nonexistent/livebridge-fuzz/livebridge.yaml") else {
            fatalError("the events target's rules do not load")
        }
        return rules
    }()
}
