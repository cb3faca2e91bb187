public import JSON

/// An entity's attributes, read by name. Kept as one array of pairs sorted by name: an entity has a handful of
/// attributes and LiveBridge keeps thousands of entities, and a dictionary costs two to three times the memory.
public struct EntityAttributes: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// Sorted by name, names unique.
    private(set) var members: [Member]

    struct Member: Sendable, Equatable {
        let name: String
        var value: JSONValue
    }

    public init() { members = [] }

    /// Members already sorted by name, names unique.
    init(sortedMembers: [Member]) { members = sortedMembers }

    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { Member(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
    }

    /// In the order an object gave them; a name given twice keeps its last value, as JSON objects do.
    public init(_ pairs: [Element]) {
        // By name, equal names in the order given: the last of each run is the value that counts.
        let order = pairs.indices.sorted { (pairs[$0].key, $0) < (pairs[$1].key, $1) }
        var members: [Member] = []
        members.reserveCapacity(pairs.count)
        for index in order {
            let (name, value) = pairs[index]
            if members.last?.name == name {
                members[members.count - 1].value = value
            } else {
                members.append(Member(name: name, value: value))
            }
        }
        self.members = members
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    /// The value of an attribute; setting nil removes it.
    public subscript(name: String) -> JSONValue? {
        get { Self.value(of: name, in: members) }
        set {
            let index = members.sortedPosition(of: name) { $0.name }
            let present = index < members.count && members[index].name == name
            switch (newValue, present) {
            case (let value?, true): members[index].value = value
            case (let value?, false): members.insert(Member(name: name, value: value), at: index)
            case (nil, true): members.remove(at: index)
            case (nil, false): break
            }
        }
    }

    /// The same attributes as a dictionary, for JSON output.
    public var dictionary: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: members.map { ($0.name, $0.value) })
    }

    /// In name order.
    public func makeIterator() -> some IteratorProtocol<Element> {
        members.lazy.map { (key: $0.name, value: $0.value) }.makeIterator()
    }

    /// The value of `name` among members sorted by name.
    static func value<Members: RandomAccessCollection<Member>>(of name: String, in members: Members) -> JSONValue?
    where Members.Index == Int {
        let index = members.sortedPosition(of: name) { $0.name }
        guard index < members.endIndex, members[index].name == name else { return nil }
        return members[index].value
    }
}
