import Glibc
import HomeAssistant
import JSON
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
        }
    }
}

