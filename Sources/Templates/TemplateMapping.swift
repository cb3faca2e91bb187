import HomeAssistant

/// A template's dict: Python's, which keeps its keys in the order they were first set. Printing, iterating, `items()`,
/// `to_json` and `urlencode` all walk that order (`{'b': 1, 'a': 2}` prints as written); equality ignores it.
///
/// Kept as pairs in order, searched directly while small (an entity object, `loop`, a payload's dict: a handful of
/// keys, built on every render) and through an index once larger.
public struct TemplateMapping: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: TemplateValue)

    private var pairs: [Element] = []
    /// The index of a large mapping, or the entity a state object is of: one word beside the pairs, so a template value
    /// stays as small as it was (a mapping of more than `directLimit` keys is never a state object).
    private var side: Side?
    private static let directLimit = 16

    private enum Side: Sendable {
        /// Position of each key, once there are more than `directLimit`.
        case index([String: Int])
        case entity(EntityObject)
    }

    /// What makes a mapping an entity's state object (`states.sensor.x`, `expand()`'s items): the state and the zone
    /// its time prints in. Such a mapping prints as Home Assistant's TemplateState does, not as a dict; it is read and
    /// compared as one.
    final class EntityObject: Sendable {
        let state: EntityState
        let zone: LocalTimeZone
        init(state: EntityState, zone: LocalTimeZone) { self.state = state; self.zone = zone }
    }

    /// Set on a state object of at most `directLimit` keys (an entity's has nine); a larger mapping keeps its index.
    var entity: EntityObject? {
        get { if case .entity(let object)? = side { object } else { nil } }
        set { if pairs.count <= Self.directLimit { side = newValue.map(Side.entity) } }
    }

    /// The same members as a plain dict (a state object's marker gone).
    var asDict: TemplateMapping {
        var out = self
        if case .entity? = out.side { out.side = nil }
        return out
    }

    private var index: [String: Int]? {
        if case .index(let index)? = side { index } else { nil }
    }

    public init() {}

    /// Pairs in order; a key given again keeps its first place and takes the later value, as Python's dict does.
    public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (String, TemplateValue) {
        for (key, value) in pairs { self[key] = value }
    }

    /// Keys in sorted order: for values that come without an order of their own (a dictionary).
    public init(sorting dictionary: [String: TemplateValue]) {
        pairs.reserveCapacity(dictionary.count)
        for key in dictionary.keys.sorted() { pairs.append((key, dictionary[key]!)) }
        if pairs.count > Self.directLimit { reindex() }
    }

    public init(dictionaryLiteral elements: (String, TemplateValue)...) {
        pairs.reserveCapacity(elements.count)
        for (key, value) in elements { self[key] = value }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    /// The keys in the order they were first set.
    public var keys: [String] { pairs.map(\.key) }
    /// The values, in key order.
    public var orderedValues: [TemplateValue] { pairs.map(\.value) }

    /// Each value in order, without copying the keys or the pairs.
    func forEachValue<E: Error>(_ body: (TemplateValue) throws(E) -> Void) throws(E) {
        for index in pairs.indices { try body(pairs[index].value) }
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        return pairs.firstIndex { $0.key == key }
    }

    private mutating func reindex() {
        var built: [String: Int] = [:]
        built.reserveCapacity(pairs.count)
        for (i, pair) in pairs.enumerated() { built[pair.key] = i }
        side = .index(built)
    }

    /// A key's value; setting a new key puts it last, setting nil removes it.
    public subscript(key: String) -> TemplateValue? {
        get { position(of: key).map { pairs[$0].value } }
        set {
            // A state object changed is a dict (`dict(states.sensor.x, q=1)`): it prints as one.
            if case .entity? = side { side = nil }
            if let newValue {
                if let at = position(of: key) {
                    pairs[at].value = newValue
                } else {
                    pairs.append((key, newValue))
                    if case .index(var built)? = side {
                        side = nil  // the index alone holds it now: added to in place
                        built[key] = pairs.count - 1
                        side = .index(built)
                    } else if pairs.count > Self.directLimit {
                        reindex()
                    }
                }
            } else if let at = position(of: key) {
                pairs.remove(at: at)
                if index != nil { reindex() }
            }
        }
    }

    public func mapValues(_ transform: (TemplateValue) throws -> TemplateValue) rethrows -> TemplateMapping {
        var out = self
        if case .entity? = out.side { out.side = nil }  // changed values: a dict now
        for i in out.pairs.indices { out.pairs[i].value = try transform(out.pairs[i].value) }
        return out
    }

    /// The members as an unordered dictionary.
    public var dictionary: [String: TemplateValue] {
        Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    public func makeIterator() -> IndexingIterator<[Element]> { pairs.makeIterator() }

    /// Python's dict equality: the same keys with equal values, whatever their order.
    public static func == (a: TemplateMapping, b: TemplateMapping) -> Bool {
        // A state object is no dict: equal only to a state object (of the same fields).
        guard a.count == b.count, (a.entity == nil) == (b.entity == nil) else { return false }
        return a.pairs.allSatisfy { b[$0.key] == $0.value }
    }
}
