/// A template's dict: Python's, which keeps its keys in the order they were first set. Printing, iterating, `items()`,
/// `to_json` and `urlencode` all walk that order (`{'b': 1, 'a': 2}` prints as written); equality ignores it.
public struct TemplateMapping: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: TemplateValue)

    /// The keys in the order they were first set.
    public private(set) var keys: [String] = []
    private var values: [String: TemplateValue] = [:]

    public init() {}

    /// Pairs in order; a key given again keeps its first place and takes the later value, as Python's dict does.
    public init<Pairs: Sequence>(_ pairs: Pairs) where Pairs.Element == (String, TemplateValue) {
        for (key, value) in pairs { self[key] = value }
    }

    /// Keys in sorted order: for values that come without an order of their own (a dictionary).
    public init(sorting dictionary: [String: TemplateValue]) {
        keys = dictionary.keys.sorted()
        values = dictionary
    }

    public init(dictionaryLiteral elements: (String, TemplateValue)...) {
        self.init(elements)
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// A key's value; setting a new key puts it last, setting nil removes it.
    public subscript(key: String) -> TemplateValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// The values, in key order.
    public var orderedValues: [TemplateValue] { keys.map { values[$0]! } }

    public func mapValues(_ transform: (TemplateValue) throws -> TemplateValue) rethrows -> TemplateMapping {
        var out = TemplateMapping()
        out.keys = keys
        out.values = try values.mapValues(transform)
        return out
    }

    /// The members as an unordered dictionary.
    public var dictionary: [String: TemplateValue] { values }

    public func makeIterator() -> some IteratorProtocol<Element> {
        keys.lazy.map { (key: $0, value: values[$0]!) }.makeIterator()
    }

    /// Python's dict equality: the same keys with equal values, whatever their order.
    public static func == (a: TemplateMapping, b: TemplateMapping) -> Bool { a.values == b.values }
}
