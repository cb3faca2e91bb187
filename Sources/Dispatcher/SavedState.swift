import JSON
import LiveActivity
import Platform

/// `state.json` read back: it is only a file on disk, so every field is checked before LiveBridge acts on it. A time
/// far outside now would trap a conversion, a clear's target outside its backend's grammar would send the backend's
/// token to another path or host, a method with CR/LF would smuggle a request. A bad entry is left out and named in
/// a warning; the rest loads.
extension DeliveryState {
    /// How far from now a saved time may lie: a start is at most hours old (renewal) and a clear at most hours ahead
    /// (`dismiss_after`); a week either way leaves room for a clock that moved, and keeps every conversion in range.
    static let timeWindow = 7 * 86_400.0
    /// The largest clear body kept (those LiveBridge builds are a few hundred bytes).
    static let largestBody = 64 << 10

    /// The state in a file's bytes, checked as `init(json:now:warn:)` does; nil when they are no state file at all.
    public static func decode(_ bytes: [UInt8], now: Double, warn: (String) -> Void) -> DeliveryState? {
        guard let json = try? JSONParser.parse(bytes) else { return nil }
        return DeliveryState(json: json, now: now, warn: warn)
    }

    /// The state in `json` as of `now` (seconds since 1970); nil when it is no state file at all. Each entry or relay
    /// that fails a check is dropped with a warning naming it.
    init?(json: JSONValue, now: Double, warn: (String) -> Void) {
        guard json["version"]?.intValue == 1, let activities = json["activities"]?.objectValue else { return nil }
        for (key, value) in activities {
            switch Self.entry(key: key, value, now: now) {
            case .success(let entry): entries[key] = entry
            case .failure(let problem): warn("state.json: entry \(OutsideText.quoted(key)) dropped: \(problem.text)")
            }
        }
        for (device, pushes) in json["relays"]?.objectValue ?? [:] {
            guard LiveUpdateSchema.serviceProblem(device) == nil, let list = pushes.arrayValue else {
                warn("state.json: relay \(OutsideText.quoted(device)) dropped: not a notify service with a list of times")
                continue
            }
            let window = (now - 2 * RelayBudget.day)...(now + RelayBudget.day)
            let times = list.compactMap(\.doubleValue).filter { window.contains($0) }
            if times.count != list.count { warn("state.json: relay \(OutsideText.quoted(device)): \(list.count - times.count) times out of range dropped") }
            relays[device] = RelayBudget(pushes: Array(times.sorted().suffix(RelayBudget.limit)))
        }
    }

    struct EntryError: Error { let text: String }

    /// One entry, checked: its key is `activity@target`, its times near `now`, its clear a request its backend makes.
    static func entry(key: String, _ value: JSONValue, now: Double) -> Result<Entry, EntryError> {
        func problem(_ text: String) -> Result<Entry, EntryError> { .failure(EntryError(text: text)) }
        guard let (activity, target) = split(key) else { return problem("the key is not activity@target") }
        if let wrong = targetProblem(activity: activity, target: target) { return problem(wrong) }
        guard let running = value["running"]?.boolValue else { return problem("running is not true or false") }
        let times = (now - timeWindow)...(now + timeWindow)
        var entry = Entry(running: running, digest: nil)
        if let digest = value["digest"] {
            guard let text = digest.stringValue, text.utf8.count == 16, text.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else {
                return problem("digest is not 16 hex digits")
            }
            entry.digest = text
        }
        if let started = value["started"] {
            guard let seconds = started.doubleValue, times.contains(seconds) else { return problem("started is not a time within a week of now") }
            entry.started = seconds
        }
        if let dismissed = value["dismissed"] {
            guard let flag = dismissed.boolValue else { return problem("dismissed is not true or false") }
            entry.dismissed = flag
        }
        if let saved = value["dismiss"] {
            switch dismissal(saved, times: times) {
            case .success(let dismissal): entry.dismissal = dismissal
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(entry)
    }

    /// A saved clear: a known backend kind, one of its methods, a target in its grammar, an object body, a time near now.
    /// Files from before PushWard hold Home Assistant's clears only, without kind and method.
    static func dismissal(_ saved: JSONValue, times: ClosedRange<Double>) -> Result<Dismissal, EntryError> {
        func problem(_ text: String) -> Result<Dismissal, EntryError> { .failure(EntryError(text: "dismiss." + text)) }
        let kindText = saved["kind"] == nil ? BackendKind.homeassistant.rawValue : saved["kind"]?.stringValue
        guard let kind = kindText.flatMap(BackendKind.init(rawValue:)) else { return problem("kind is not a backend kind") }
        let method = saved["method"] == nil && kind == .homeassistant ? "call_service" : saved["method"]?.stringValue
        guard let method, kind.methods.contains(method) else {
            return problem("method \(OutsideText.quoted(method ?? "")) is not one of \(kind.rawValue)'s: " + kind.methods.sorted().joined(separator: ", "))
        }
        guard let target = saved["target"]?.stringValue else { return problem("target is missing") }
        if let wrong = kind.targetProblem(target) { return problem("target: " + wrong) }
        guard let body = saved["body"], body.objectValue != nil, body.jsonBytes.count <= largestBody else {
            return problem("body is not an object of at most \(largestBody) bytes")
        }
        guard let at = saved["at"]?.doubleValue, times.contains(at) else { return problem("at is not a time within a week of now") }
        return .success(Dismissal(target: target, body: body, at: at, kind: kind, method: method))
    }

    /// Why a key's activity and target cannot be one LiveBridge made (nil: they can): an activity of 1–256 characters
    /// without controls; a backend name without `/` or `@`, then perhaps `/` and one of its notify services.
    static func targetProblem(activity: String, target: String) -> String? {
        guard (1...256).contains(activity.unicodeScalars.count), !activity.unicodeScalars.contains(where: OutsideText.isUnsafe) else {
            return "the activity is not 1 to 256 characters without control characters"
        }
        let name = backend(ofTarget: target)
        guard (1...128).contains(name.unicodeScalars.count), !name.unicodeScalars.contains(where: { OutsideText.isUnsafe($0) || $0 == "@" }) else {
            return "the backend name is not 1 to 128 characters without control characters or @"
        }
        if name.endIndex != target.endIndex, let wrong = LiveUpdateSchema.serviceProblem(String(target.dropFirst(name.count + 1))) {
            return "the target's service: " + wrong
        }
        return nil
    }
}
