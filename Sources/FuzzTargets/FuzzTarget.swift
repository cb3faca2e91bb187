import Dispatcher
import Glibc
import HomeAssistant
import JSON
import Rules
import Templates
import LiveActivity
import WebSocketTransport

/// libFuzzer targets (`make fuzz`): what comes from outside the daemon, fed hostile bytes. Each must return
/// normally for every input: a trap, an overflow or a sanitizer report is a finding.
///
/// Built into `LiveBridgeFuzz` with `-sanitize=fuzzer,address`; `make test` replays the kept corpus through them.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The rules loader: YAML (anchors, tags, includes of files that do not exist) and the templates in it.
    case rules
    /// The JSON reader: full parse and the validating skip must agree.
    case json
    /// Home Assistant's frames: the envelope, then snapshot/diff events into the entity store; and the same frame read
    /// in place, which must agree with that or decline it untouched.
    case messages
    /// Templates over hostile states: the first line is a template, each further line an entity's state.
    case templates
    /// Entity states and attributes, each line one entity's, under a fixed set of templates as users write them.
    case entityStates
    /// Python's format-specification and printf mini-languages: the first line a specification, the second a value.
    case formatSpec
    /// `suggest` over hostile registries: names, areas, units and states from the input; the proposal must load and
    /// hold exactly the activities it meant to.
    case suggest
    /// `state.json` through the loader's checks: no entry may come out with a clear its backend would never send.
    case stateFile
    /// What a WebSocket server sends a client: the upgrade's answer, then frames. The first byte sets how the rest is
    /// cut into reads, and (its top bit) whether the rest follows a good answer in the same read; the frames read in
    /// pieces must give what they give read at once.
    case webSocket
    /// A `livebridge_activity` event's data through the event path's checks: no request may leave its backend's grammar.
    case events

    /// The frame read in place (`EntityStore.applyDiffFrame`) against the general path, from the same states: taken,
    /// it must give exactly what decoding gives; declined, nothing may have changed. A lent store (the daemon's: states
    /// changed where they are, changes handed over as ids) must end where the other does.
    private static func checkInPlace(_ bytes: [UInt8], decoded: [ServerMessage]?) {
        func store(lent: Bool = false) -> EntityStore {
            var store = EntityStore()
            store.isLent = lent
            store.share(entityIDs: ["sensor.a", "sensor.b"])
            _ = try? store.replace(withSnapshot: JSONText(#"{"a":{"sensor.a":{"s":"1","a":{"t":0,"unit":"W"},"lc":1.0},"sensor.b":{"s":"x","lc":1.0}}}"#))
            store.tookSnapshot()
            return store
        }
        var fast = store(), general = store(), lent = store(lent: true)
        checkMixed(bytes, decoded: decoded, store: store())
        var changes: [EntityChange] = [], lentChanges: [EntityChange] = []
        let taken = bytes.withUnsafeBufferPointer { fast.applyDiffFrame($0, subscriptionID: 7, into: &changes) }
        let lentTaken = bytes.withUnsafeBufferPointer { lent.applyDiffFrame($0, subscriptionID: 7, into: &lentChanges) }
        if lentTaken != taken || lentChanges.map(\.withoutState) != changes.map(\.withoutState) || lent.states != fast.states
            || lent.order != fast.order || lent.lent.states != lent.states {
            fatalError("a lent store and one of its own disagree: \(bytes)")
        }
        guard taken else {
            if !changes.isEmpty || fast.states != general.states { fatalError("a declined frame changed the store: \(bytes)") }
            return
        }
        guard let decoded else { fatalError("a frame taken in place does not decode: \(bytes)") }
        var expected: [EntityChange] = []
        for case .event(7, let event) in decoded { expected += (try? general.apply(event)) ?? [] }
        if changes != expected || fast.states != general.states { fatalError("in place and decoded disagree: \(bytes)") }
    }

    /// A frame read into parts (`EntityStore.readDiffFrame`), applied as the connection applies them — diffs in
    /// place until a message of the subscription itself or a result, then the general way — must end where decoding
    /// the frame whole and applying each of the subscription's events ends; every other part must decode alone to
    /// the message decoding whole gives in its place.
    private static func checkMixed(_ bytes: [UInt8], decoded: [ServerMessage]?, store: EntityStore) {
        var fast = store, general = store
        guard let parts = bytes.withUnsafeBufferPointer({ fast.readDiffFrame($0, subscriptionID: 7) }) else {
            if fast.states != general.states || fast.heldDiffValues != 0 { fatalError("a declined frame left something: \(bytes)") }
            return
        }
        guard let decoded, decoded.count == parts.count else { fatalError("parts and decoded messages disagree: \(bytes)") }
        var changes: [EntityChange] = [], expected: [EntityChange] = []
        var generally = false
        for (part, message) in zip(parts, decoded) {
            let alone = bytes.withUnsafeBufferPointer { try? ServerMessage.decode(message: UnsafeBufferPointer(rebasing: $0[part.range])) }
            if alone != message { fatalError("a part decodes alone unlike in its frame: \(bytes)") }
            if case .event(7, let event) = message { expected += (try? general.apply(event)) ?? [] }
            switch part {
            case .diff(let position, _):
                if generally, case .event(7, let event) = message { changes += (try? fast.apply(event)) ?? [] }
                else if !generally { changes.append(fast.applyFrameDiff(position)) }
            case .notKept:
                if generally, case .event(7, let event) = message { changes += (try? fast.apply(event)) ?? [] }
            case .other:
                if case .event(7, let event) = message { changes += (try? fast.apply(event)) ?? [] }
                if !message.leavesEntitiesAsTheyAre(subscriptionID: 7) { generally = true }
            }
        }
        fast.endFrame(parts)
        if changes != expected || fast.states != general.states || fast.heldDiffValues != 0 {
            fatalError("a frame read into parts and the frame decoded whole disagree: \(bytes)")
        }
    }

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
            let messages = try? ServerMessage.decode(frame: bytes)
            Self.checkInPlace(bytes, decoded: messages)
            guard let messages else { return }
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
        case .entityStates:
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            var states: [String: EntityState] = [:]
            for index in 0..<3 {
                let line = index < lines.count ? String(lines[index]) : ""
                let id = "sensor.s\(index)"
                var attributes: [String: JSONValue] = ["value": .string(line), "friendly_name": .string(line)]
                if let parsed = try? JSONParser.parse(Array(line.utf8)) { attributes["parsed"] = parsed }
                states[id] = EntityState(entityID: id, state: line, attributes: EntityAttributes(attributes), lastChanged: 1_795_348_800)
            }
            let context = EvaluationContext(states: states, now: 1_795_348_800, timeZone: .utc)
            for template in Self.realWorldTemplates { _ = (try? template.evaluate(in: context))?.text }
        case .formatSpec:
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            let spec = String(lines.first ?? "")
            let text = lines.count > 1 ? String(lines[1]) : ""
            let values: [TemplateValue] = [.string(text), .int(Int(text) ?? text.utf8.count), .double(Double(text) ?? -0.0), .bool(text.isEmpty),
                                           .none, .datetime(1_795_348_800), .list([.string(text), .int(1)]), .mapping(["a": .string(text)])]
            let context = EvaluationContext(states: [:], now: 1_795_348_800, timeZone: .utc)
            for template in Self.formatTemplates {
                for value in values { _ = (try? template.evaluate(in: context, variables: ["spec": .string(spec), "value": value]))?.text }
            }
        case .suggest:
            SuggestFuzzing.run(bytes)
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
        case .webSocket:
            guard let first = bytes.first else { return }
            var rest = Array(bytes.dropFirst())
            var handshake = WebSocketHandshake(nonce: Array("the sample nonce".utf8))
            if first & 0x80 != 0 {
                // A good answer, the input after it in the same read: the frames are what the handshake leaves over.
                let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(WebSocketHandshake.expectedAccept(for: handshake.key))\r\n\r\n"
                let outcome = (Array(answer.utf8) + rest).withUnsafeBytes { handshake.read($0) }
                guard case .upgraded(let leftOver) = outcome, leftOver == rest else { fatalError("a good answer gave \(outcome)") }
                rest = leftOver
            } else {
                _ = rest.withUnsafeBytes { handshake.read($0) }
            }
            func frames(readsOf size: Int) -> ([WebSocketFrameReader.Event], WebSocketFrameReader.ReadError?) {
                var reader = WebSocketFrameReader(maximumSize: 4096)
                var events: [WebSocketFrameReader.Event] = []
                for start in stride(from: 0, to: rest.count, by: size) {
                    let result = rest[start..<min(start + size, rest.count)].withUnsafeBytes { raw in
                        Result { () throws(WebSocketFrameReader.ReadError) in try reader.read(raw) { events.append($0) } }
                    }
                    if reader.pendingCount > 4096 { fatalError("\(reader.pendingCount) bytes held over the 4096-byte limit") }
                    if case .failure(let error) = result { return (events, error) }
                }
                return (events, nil)
            }
            let whole = frames(readsOf: max(1, rest.count))
            let pieces = frames(readsOf: 1 + Int(first % 32))
            if whole.0 != pieces.0 || whole.1 != pieces.1 { fatalError("read at once \(whole), in pieces \(pieces)") }
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

    /// Templates as people write them (Home Assistant's documentation, community forum answers, the Aivi
    /// blueprints), reading the fuzzed entities `sensor.s0`…`sensor.s2`; several hand the state to a regular
    /// expression, a format or a count, where the last round's traps were.
    static let realWorldTemplates: [Template] = [
        "{{ states('sensor.s0') | float(0) | round(1) }}",
        "{{ (states('sensor.s0') | int(0) / 60) | int }}h {{ states('sensor.s0') | int(0) % 60 }}m",
        "{{ states('sensor.s0') is match('^(\\w+\\s?)*$') }}",
        "{{ states('sensor.s0') | regex_replace('(\\d+) min', '\\1 minutes') }}",
        "{{ states('sensor.s0') | regex_findall_index('(\\d+)') }}",
        "{{ states('sensor.s0') | regex_search(states('sensor.s1')) }}",
        "{{ states('sensor.s0') | regex_replace(states('sensor.s1'), states('sensor.s2')) }}",
        "{{ '{:.1f}'.format(states('sensor.s0') | float(0)) }}",
        "{{ '%02d:%02d' % (states('sensor.s0') | int(0) // 60, states('sensor.s0') | int(0) % 60) }}",
        "{{ states('sensor.s0') | format(states('sensor.s1')) }}",
        "{{ states('sensor.s0').format(states('sensor.s1'), x=states('sensor.s2')) }}",
        "{{ range(states('sensor.s0') | int(0), states('sensor.s1') | int(0)) | list | length }}",
        "{{ range(states('sensor.s0') | int(0), states('sensor.s1') | int(0), states('sensor.s2') | int(1)) | list | count }}",
        "{{ states('sensor.s0') | truncate(states('sensor.s1') | int(10), false, '...', states('sensor.s2') | int(5)) }}",
        "{{ states('sensor.s0') | center(states('sensor.s1') | int(0)) }}",
        "{{ [1, 2, 3] | batch(states('sensor.s0') | int(1), 'x') | list }}",
        "{{ states('sensor.s0') | indent(states('sensor.s1') | int(0)) }}",
        "{{ states('sensor.s0').zfill(states('sensor.s1') | int(0)) }}",
        "{{ ('x' * (states('sensor.s0') | int(0))) | length }}",
        "{{ states('sensor.s0')[states('sensor.s1') | int(0):states('sensor.s2') | int(0)] }}",
        "{{ states('sensor.s0') | replace(states('sensor.s1'), states('sensor.s2')) }}",
        "{{ states('sensor.s0').split(states('sensor.s1') or ',') | map('trim') | unique | join(states('sensor.s2')) }}",
        "{{ states('sensor.s0') | slugify(separator=states('sensor.s1')) }}",
        "{{ states('sensor.s0') ~ states('sensor.s1') + states('sensor.s2') }}",
        "{{ as_timestamp(states('sensor.s0'), 0) | timestamp_custom('%H:%M') }}",
        "{{ (as_datetime(states('sensor.s0')) - now()).total_seconds() | int(0) }}",
        "{{ strptime(states('sensor.s0'), states('sensor.s1'), none) }}",
        "{{ states('sensor.s0') | as_timedelta }}",
        "{{ state_attr('sensor.s0', 'parsed') | tojson }}",
        "{{ (state_attr('sensor.s0', 'parsed') or {}).get('a', 0) }}",
        "{{ states('sensor.s0') | from_json | default(0) }}",
        "{{ states('sensor.s0') | int(0) | timestamp_local }}",
        "{{ states('sensor.s0') | base64_decode }}",
        "{{ states('sensor.s0') | urlencode }}",
        "{{ states.sensor | selectattr('state', 'search', states('sensor.s1')) | map(attribute='name') | join(', ') }}",
        "{% for i in range(states('sensor.s0') | int(0)) %}{{ i }}{% endfor %}",
        "{{ relative_time(as_datetime(states('sensor.s0'), now())) }}",
        "{{ states('sensor.s0') | ordinal }}",
        "{{ (states('sensor.s0') | float(0)) | round(states('sensor.s1') | int(0)) }}",
    ].compactMap { try? Template($0) }

    /// The value and the specification from the input, through every way a template formats.
    static let formatTemplates: [Template] = [
        "{{ ('{:' ~ spec ~ '}').format(value) }}", "{{ spec % value }}", "{{ spec.format(value, value, a=value) }}",
        "{{ ('%' ~ spec) % value }}", "{{ value | format(spec) }}",
    ].compactMap { try? Template($0, variables: ["spec", "value"]) }

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
