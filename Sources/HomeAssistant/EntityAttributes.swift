public import JSON

/// An entity's attributes, read by name. Kept as one array of pairs in the order Home Assistant gave them (the order
/// its templates iterate and print them in: `attributes.items()`, `{{ states.x.attributes }}`), searched member by
/// member: an entity has a handful of attributes and LiveBridge keeps thousands of entities, and a dictionary costs two
/// to three times the memory.
public struct EntityAttributes: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// In order, names unique.
    private(set) var members: [Member]

    struct Member: Sendable, Equatable {
        let name: String
        var value: JSONValue
    }

    public init() { members = [] }

    /// Members already in order, names unique.
    init(orderedMembers: [Member]) { members = orderedMembers }

    /// From a dictionary, which has no order of its own: by name.
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { Member(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
    }

    /// In the order an object gave them; a name given twice keeps its first place and its last value, as a Python
    /// dict made from a JSON object does.
    public init(_ pairs: [Element]) {
        members = []
        members.reserveCapacity(pairs.count)
        apply(setting: pairs, removing: [])
    }

    /// Sets (a name there keeps its place, a new one comes last), then removes. Past a handful of names, through an
    /// index of names: a hostile Home Assistant's entity of 20,000 attributes costs linear time, not quadratic.
    mutating func apply(setting: [Element], removing: [String]) {
        if members.count + setting.count <= Self.directLimit && removing.count <= Self.directLimit {
            for (name, value) in setting { self[name] = value }
            for name in removing { self[name] = nil }
            return
        }
        var index: [String: Int] = [:]
        index.reserveCapacity(members.count + setting.count)
        for (at, member) in members.enumerated() { index[member.name] = at }
        for (name, value) in setting {
            if let at = index[name] {
                members[at].value = value
            } else {
                index[name] = members.count
                members.append(Member(name: name, value: value))
            }
        }
        guard !removing.isEmpty else { return }
        let gone = Set(removing)
        members.removeAll { gone.contains($0.name) }
    }

    /// How many names are searched member by member; more go through an index.
    static let directLimit = 16

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    /// The value of an attribute; setting nil removes it, setting a new name puts it last.
    public subscript(name: String) -> JSONValue? {
        get { Self.value(of: name, in: members) }
        set {
            let index = Self.position(of: name, in: members)
            switch (newValue, index) {
            case (let value?, let at?): members[at].value = value
            case (let value?, nil): members.append(Member(name: name, value: value))
            case (nil, let at?): members.remove(at: at)
            case (nil, nil): break
            }
        }
    }

    /// The same attributes as a dictionary, for JSON output.
    public var dictionary: [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: members.map { ($0.name, $0.value) })
    }

    /// In order.
    public func makeIterator() -> some IteratorProtocol<Element> {
        members.lazy.map { (key: $0.name, value: $0.value) }.makeIterator()
    }

    /// Python's dict equality: the same names with equal values, whatever their order.
    public static func == (lhs: EntityAttributes, rhs: EntityAttributes) -> Bool {
        sameMembers(lhs.members, rhs.members)
    }

    static func sameMembers<A: Collection<Member>, B: RandomAccessCollection<Member>>(_ lhs: A, _ rhs: B) -> Bool where B.Index == Int {
        guard lhs.count == rhs.count else { return false }
        if lhs.elementsEqual(rhs) { return true }
        guard rhs.count > directLimit else { return lhs.allSatisfy { member in value(of: member.name, in: rhs) == member.value } }
        var values: [String: JSONValue] = [:]
        values.reserveCapacity(rhs.count)
        for member in rhs { values[member.name] = member.value }
        return lhs.allSatisfy { values[$0.name] == $0.value }
    }

    /// Where `name` stands among `members`.
    static func position<Members: RandomAccessCollection<Member>>(of name: String, in members: Members) -> Int?
    where Members.Index == Int {
        members.firstIndex { $0.name == name }
    }

    /// The value of `name` among `members`.
    static func value<Members: RandomAccessCollection<Member>>(of name: String, in members: Members) -> JSONValue?
    where Members.Index == Int {
        position(of: name, in: members).map { members[$0].value }
    }
}
