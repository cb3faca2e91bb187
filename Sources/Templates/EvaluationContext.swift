import FoundationEssentials
public import HomeAssistant
import Platform

/// What a template sees: the entity states and the time, from an injectable clock.
///
/// Its values live in one shared box, copied on write: every render hands the context to an evaluator, and a copy is
/// then one reference counted, not the six (states, order, the time zone's two functions, Home Assistant's renderings)
/// that a plain struct would count each time.
public struct EvaluationContext: Sendable {
    /// Mutated only while uniquely referenced (`writable()`), so shared copies never see a change.
    private final class Storage: @unchecked Sendable {
        var states: [String: EntityState]
        var order: [String]
        var now: Double
        var timeZone: LocalTimeZone
        var renderedByHomeAssistant: [String: Result<TemplateValue, EvaluationError>]
        var home: HomeLocation?

        init(states: [String: EntityState], order: [String], now: Double, timeZone: LocalTimeZone,
             renderedByHomeAssistant: [String: Result<TemplateValue, EvaluationError>], home: HomeLocation?) {
            self.states = states
            self.order = order
            self.now = now
            self.timeZone = timeZone
            self.renderedByHomeAssistant = renderedByHomeAssistant
            self.home = home
        }

        func copy() -> Storage {
            Storage(states: states, order: order, now: now, timeZone: timeZone,
                    renderedByHomeAssistant: renderedByHomeAssistant, home: home)
        }
    }

    private var storage: Storage

    private mutating func writable() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    public var states: [String: EntityState] {
        get { storage.states }
        _modify { let box = writable(); yield &box.states }
    }
    /// The entity ids in Home Assistant's state machine's order (the order `get_states` and a subscription's
    /// snapshot give, new entities last): `states` and `states.domain` iterate in it, as Home Assistant's templates
    /// do. Ids here without a state are skipped; states without a place come after, by id.
    public var order: [String] {
        get { storage.order }
        _modify { let box = writable(); yield &box.order }
    }
    /// Seconds since 1970: `now()`.
    public var now: Double {
        get { storage.now }
        set { writable().now = newValue }
    }
    /// For `timestamp_custom(…, local=true)` (the default, as in Home Assistant).
    public var timeZone: LocalTimeZone {
        get { storage.timeZone }
        set { writable().timeZone = newValue }
    }
    /// The latest result Home Assistant rendered for each template only it can render, by the template's text.
    public var renderedByHomeAssistant: [String: Result<TemplateValue, EvaluationError>] {
        get { storage.renderedByHomeAssistant }
        _modify { let box = writable(); yield &box.renderedByHomeAssistant }
    }
    /// Home's location and length unit for `distance()`/`closest()`, from Home Assistant's configuration; without it,
    /// `zone.home`'s attributes in kilometres.
    public var home: HomeLocation? {
        get { storage.home }
        set { writable().home = newValue }
    }

    public init(states: [String: EntityState], order: [String] = [], now: Double, timeZone: LocalTimeZone = .system,
                renderedByHomeAssistant: [String: Result<TemplateValue, EvaluationError>] = [:], home: HomeLocation? = nil) {
        storage = Storage(states: states, order: order, now: now, timeZone: timeZone,
                          renderedByHomeAssistant: renderedByHomeAssistant, home: home)
    }

    /// An entity's state by its id as a template writes it: Home Assistant's ids are lower case, and it looks a
    /// written one up as it is, then lower-cased (`states('SENSOR.X')` reads sensor.x).
    func state(_ id: String) -> EntityState? {
        states[id] ?? states[id.lowercased()]
    }

    /// The states and order a states file gave.
    public init(loading loaded: (states: [String: EntityState], order: [String]), now: Double) {
        self.init(states: loaded.states, order: loaded.order, now: now)
    }

    /// The ids of the states (those starting with `prefix`, when given) in Home Assistant's order: one walk of
    /// `order`, no sorting; states it does not name follow by id.
    func inStateMachineOrder(prefix: String? = nil) -> [String] {
        var out: [String] = []
        var placed = 0
        for id in order where states[id] != nil {
            placed += 1
            if prefix.map({ id.hasPrefix($0) }) ?? true { out.append(id) }
        }
        guard placed < states.count else { return out }
        let known = Set(order)
        out += states.keys.filter { !known.contains($0) && (prefix.map($0.hasPrefix) ?? true) }.sorted()
        return out
    }
}

/// Why a template could not produce a value: the field falls back to its default or is left out.
public struct EvaluationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// Python's integers grow without bound; ours are 64 bits, so a result beyond them fails rather than wraps.
    static func integerOverflow(_ expression: String) -> EvaluationError {
        EvaluationError("integer overflow: \(expression) is beyond 64-bit integers (±9,223,372,036,854,775,807)")
    }
}

/// Bounds on what one evaluation may build, so a state (`'x' * (states('sensor.n') | int)`) cannot exhaust memory.
enum EvaluationLimits {
    /// The longest text a template may build by repetition or replacement, in characters. Payload fields are short:
    /// Island Pulse's longest is 256 characters, a Live Activity's whole payload 4 KB.
    static let maximumTextLength = 65_536

    /// `text` with every `old` replaced by `new`, refused when the result would pass `maximumTextLength`.
    static func replacing(_ old: String, with new: String, in text: String) throws(EvaluationError) -> String {
        try chargeSearch(old, in: text, "replace")
        let growth = new.count - old.count
        if growth > 0, !old.isEmpty, text.count + (text.count / old.count) * growth > maximumTextLength {
            let occurrences = text.components(separatedBy: old).count - 1
            try checkLength(text.count + occurrences * growth, "replacing \(occurrences) × \(old.count) characters with \(new.count)")
        }
        return text.replacingAll(old, with: new)
    }

    /// A search for `needle` in `text` costs up to their lengths' product (the search is naive): charged before it runs,
    /// so a 32 KB needle in a 64 KB text is refused at once rather than searched for minutes.
    static func chargeSearch(_ needle: String, in text: String, _ what: String) throws(EvaluationError) {
        let (work, overflow) = text.utf8.count.multipliedReportingOverflow(by: max(needle.utf8.count, 1))
        try RenderBudget.spend(overflow ? .max : work / 256, what)
    }

    /// `separator.join(texts)`, refused before it is built when past the bound.
    static func joining(_ texts: [String], separator: String, _ what: String) throws(EvaluationError) -> String {
        var length = separator.utf8.count.multipliedReportingOverflow(by: max(0, texts.count - 1))
        for text in texts where !length.overflow { length = length.partialValue.addingReportingOverflow(text.utf8.count) }
        try checkLength(length.overflow ? .max : length.partialValue, "\(what) of \(texts.count) texts")
        try RenderBudget.spendBuilding(length.partialValue, what)
        return texts.joined(separator: separator)
    }

    /// How deep lists and dicts may nest: every walk over a value (printing, JSON, equality, freeing it) recurses
    /// once per level, and a template that wraps a list in a list in a loop would otherwise reach the stack's end.
    /// Python stops near 1,000 (a RecursionError); a payload needs a handful.
    static let maximumNesting = 128

    /// Refuses a container made from `items` when it would nest deeper than `maximumNesting`: only containers are
    /// followed, each charged to the render, and the walk stops at the bound (values that share parts are not
    /// walked once per path past the budget).
    static func checkNesting(_ items: some Collection<TemplateValue>, _ what: @autoclosure () -> String) throws(EvaluationError) {
        // The usual literal holds no list or dict: nothing to walk.
        guard items.contains(where: isContainer) else { return }
        try checkNesting(items, charging: 1, what())
    }

    /// Refuses `value` kept in a namespace when it nests deeper than `maximumNesting` (the namespace is one level): a
    /// namespace is the one place a loop keeps a value from one pass to the next, so the one place a value can nest a
    /// level deeper each pass (`dict(a=ns.x)`, `namespace(a=ns.x)`, `batch`, `items()`). A loop appending dicts to a
    /// list walks them all each pass, so the walk is charged a step per 64 containers.
    static func checkKeptNesting(_ value: TemplateValue, _ what: @autoclosure () -> String) throws(EvaluationError) {
        guard isContainer(value) else { return }
        try checkNesting(CollectionOfOne(value), charging: 64, what())
    }

    /// The one walk of both: each container in `items` stands at depth 2 (inside the new one); recursive, to at most
    /// the bound, copying no keys, a step charged per `every` containers.
    private static func checkNesting(_ items: some Collection<TemplateValue>, charging every: Int, _ what: String) throws(EvaluationError) {
        var visited = 0
        for item in items where isContainer(item) {
            if try nests(item, below: 2, visited: &visited, every: every, what) {
                throw EvaluationError("\(what) would nest lists and dicts more than \(maximumNesting) deep")
            }
        }
    }

    /// Whether `value`, standing at `depth`, holds lists and dicts past `maximumNesting`.
    private static func nests(_ value: TemplateValue, below depth: Int, visited: inout Int, every: Int, _ what: String) throws(EvaluationError) -> Bool {
        guard depth <= maximumNesting else { return true }
        visited += 1
        if visited % every == 0 { try RenderBudget.spend(1, what) }
        switch value {
        case .list(let items):
            for item in items where isContainer(item) {
                if try nests(item, below: depth + 1, visited: &visited, every: every, what) { return true }
            }
        case .mapping(let members):
            var deeper = false
            try members.forEachValue { item throws(EvaluationError) in
                if !deeper, isContainer(item), try nests(item, below: depth + 1, visited: &visited, every: every, what) { deeper = true }
            }
            return deeper
        default: break
        }
        return false
    }

    private static func isContainer(_ value: TemplateValue) -> Bool {
        switch value { case .list, .mapping: true; default: false }
    }

    /// Refuses a value whose printed form (or JSON) would pass `maximumTextLength`, without building it: a walk that
    /// stops at the bound, so a list nested into itself forty times is refused at once.
    static func checkPrintable(_ value: TemplateValue, _ what: @autoclosure () -> String) throws(EvaluationError) {
        var size = 0
        func walk(_ v: TemplateValue) -> Bool {
            switch v {
            case .string(let s): size += s.utf8.count + 4
            case .list(let items):
                size += 2
                for item in items { if size > maximumTextLength || !walk(item) { return false } }
            case .mapping(let members):
                size += 2
                for (key, item) in members {
                    size += key.utf8.count + 6
                    if size > maximumTextLength || !walk(item) { return false }
                }
            default: size += 24
            }
            return size <= maximumTextLength
        }
        guard walk(value) else {
            throw EvaluationError("\(what()) would print more than \(maximumTextLength) characters")
        }
    }

    static func checkLength(_ count: Int, _ what: @autoclosure () -> String) throws(EvaluationError) {
        guard count <= maximumTextLength else {
            throw EvaluationError("\(what()) would make \(count) characters; the limit is \(maximumTextLength)")
        }
    }
}
