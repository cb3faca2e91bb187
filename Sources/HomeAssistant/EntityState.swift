public import JSON
import Platform

/// The full state of one Home Assistant entity, as `get_states` would give it.
///
/// A value with its fields and its attributes in one shared allocation: the connection's store, the engine and the
/// change on its way between them hold the same state, so each entity is kept once however many hold it, in one block
/// of memory. Copied on write: the storage changes only while one state holds it (`unique()`), so sharing it across
/// threads is safe, which the compiler cannot see through `ManagedBuffer`.
public struct EntityState: @unchecked Sendable, Equatable, CustomDebugStringConvertible {
    private var storage: Storage

    public var entityID: String {
        get { storage.header.fields.entityID }
        set { unique().header.fields.entityID = newValue }
    }
    public var state: String {
        get { storage.header.fields.state }
        set { unique().header.fields.state = newValue }
    }
    /// All attributes, as a value. To read one, `attribute(_:)` does without the copy.
    public var attributes: EntityAttributes {
        get { EntityAttributes(orderedMembers: storage.members { Array($0) }) }
        set { storage = Storage.make(storage.header.fields, newValue.members) }
    }
    /// Seconds since 1970, as Home Assistant sends them.
    public var lastChanged: Double {
        get { storage.header.fields.lastChanged }
        set { unique().header.fields.lastChanged = newValue }
    }
    public var lastUpdated: Double {
        get { storage.header.fields.lastUpdated }
        set { unique().header.fields.lastUpdated = newValue }
    }

    public init(entityID: String, state: String, attributes: EntityAttributes = [:],
                lastChanged: Double, lastUpdated: Double? = nil) {
        let fields = Fields(entityID: entityID, state: state, lastChanged: lastChanged, lastUpdated: lastUpdated ?? lastChanged)
        storage = Storage.make(fields, attributes.members)
    }

    /// The fields, as the struct this used to be printed them (for test failures and debugging).
    public var debugDescription: String {
        "EntityState(entityID: \(entityID), state: \(state), attributes: \(attributes.dictionary), "
            + "lastChanged: \(lastChanged), lastUpdated: \(lastUpdated))"
    }

    /// One attribute's value, read in place.
    public func attribute(_ name: String) -> JSONValue? {
        storage.members { EntityAttributes.value(of: name, in: $0) }
    }

    public static func == (lhs: EntityState, rhs: EntityState) -> Bool {
        if lhs.storage === rhs.storage { return true }
        // Attributes compare as Python's dicts do: whatever their order.
        return lhs.storage.header.fields == rhs.storage.header.fields
            && lhs.storage.members { left in rhs.storage.members { EntityAttributes.sameMembers(left, $0) } }
    }

    /// Applies a diff: fields given replaced, attributes set and removed by name. When no one else holds the state
    /// (the daemon's store is its only holder: the engine reads the store, changes carry ids) fields and the values
    /// of attributes already there change in place, without an allocation. Otherwise, when every set attribute is
    /// already there and none goes (a sensor's attributes change values, not names), the new state is built in one
    /// allocation straight from this one's attributes, not through a copy of them as a value. Attributes already there
    /// keep their place; new ones come last (as Home Assistant's frontend merges a diff).
    mutating func apply(state newState: String?, lastChanged: Double?, lastUpdated: Double?,
                        setting: [EntityAttributes.Element], removing: [String]) {
        func change(_ fields: inout Fields) {
            if let newState { fields.state = newState }
            if let lastChanged {
                fields.lastChanged = lastChanged
                fields.lastUpdated = lastChanged
            }
            if let lastUpdated { fields.lastUpdated = lastUpdated }
        }
        guard !setting.isEmpty || !removing.isEmpty else {
            change(&unique().header.fields)
            return
        }
        // A few set names are looked up member by member; many go through the general path's index of names.
        let sameNames = removing.isEmpty && setting.count <= 8 && setting.allSatisfy { set in storage.members { EntityAttributes.value(of: set.key, in: $0) != nil } }
        if sameNames, isKnownUniquelyReferenced(&storage) {
            storage.withUnsafeMutablePointers { header, elements in
                change(&header.pointee.fields)
                // In the order given: the last value for a name wins, as in a JSON object.
                let members = UnsafeMutableBufferPointer(start: elements, count: header.pointee.count)
                for (name, value) in setting {
                    if let at = EntityAttributes.position(of: name, in: members) { members[at].value = value }
                }
            }
            return
        }
        var fields = storage.header.fields
        change(&fields)
        if sameNames {
            storage = storage.members { members in
                Storage.make(fields, members.lazy.map { member in
                    // The last value given for a name wins, as in a JSON object.
                    guard let set = setting.last(where: { $0.key == member.name }) else { return member }
                    return EntityAttributes.Member(name: member.name, value: set.value)
                })
            }
        } else {
            var attributes = self.attributes
            attributes.apply(setting: setting, removing: removing)
            storage = Storage.make(fields, attributes.members)
        }
    }

    /// Which storage holds the state (for tests: a diff applied to a state the store alone holds changes it in place).
    package var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The storage, copied first when someone else holds it too.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) {
            let fields = storage.header.fields
            storage = storage.members { Storage.make(fields, $0) }
        }
        return storage
    }

    private struct Fields: Equatable {
        var entityID: String
        var state: String
        var lastChanged: Double
        var lastUpdated: Double
    }

    private struct Header {
        var fields: Fields
        /// How many attributes follow.
        let count: Int
    }

    /// The fields, then the attributes in order, in one allocation. (A `ManagedBuffer` subclass keeps everything
    /// in its header: stored properties of its own would overlap the elements.)
    private final class Storage: ManagedBuffer<Header, EntityAttributes.Member> {
        static func make<Members: Collection<EntityAttributes.Member>>(_ fields: Fields, _ members: Members) -> Storage {
            let buffer = create(minimumCapacity: members.count) { _ in Header(fields: fields, count: members.count) }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { elements in
                _ = UnsafeMutableBufferPointer(start: elements, count: members.count).initialize(from: members)
            }
            return storage
        }

        func members<Result>(_ body: (UnsafeBufferPointer<EntityAttributes.Member>) -> Result) -> Result {
            withUnsafeMutablePointers { header, elements in body(UnsafeBufferPointer(start: elements, count: header.pointee.count)) }
        }

        deinit {
            _ = withUnsafeMutablePointers { header, elements in elements.deinitialize(count: header.pointee.count) }
        }
    }

    /// From the full form `get_states` and `state_changed` give (ISO 8601 times); nil without a state. The context is
    /// not kept: nothing LiveBridge does reads it.
    public init?(entityID: String, fullState: JSONValue) {
        guard let state = fullState["state"]?.stringValue else { return nil }
        let lastChanged = fullState["last_changed"]?.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
        let lastUpdated = fullState["last_updated"]?.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
        self.init(entityID: entityID, state: state, attributes: EntityAttributes(fullState["attributes"]?.objectValue ?? [:]),
                  lastChanged: lastChanged ?? 0, lastUpdated: lastUpdated ?? lastChanged ?? 0)
    }

    /// The same line `livebridge watch` prints, with keys in the order people read them.
    public var jsonLine: String {
        var out = "{\"entity_id\":"
        JSONValue.writeString(entityID, to: &out)
        out += ",\"state\":"
        JSONValue.writeString(state, to: &out)
        out += ",\"attributes\":{"
        // In Home Assistant's order, as it sent them.
        for (position, (name, value)) in attributes.enumerated() {
            if position > 0 { out += "," }
            JSONValue.writeString(name, to: &out)
            out += ":"
            value.write(to: &out)
        }
        out += "}"
        out += ",\"last_changed\":\"" + Timestamp.iso8601(lastChanged) + "\",\"last_updated\":\""
        out += Timestamp.iso8601(lastUpdated) + "\"}"
        return out
    }
}

/// What happened to one entity.
public enum EntityChange: Sendable, Equatable {
    case updated(EntityState)
    case removed(entityID: String)
    /// Changed, its new state left in the store it came to (`EntityStore.isLent`): the consumer reads
    /// the store, so the store stays the state's only holder and the next diff changes it in place.
    case changed(entityID: String)

    public var entityID: String {
        switch self {
        case .updated(let state): return state.entityID
        case .removed(let id), .changed(let id): return id
        }
    }

    public var isRemoval: Bool {
        if case .removed = self { true } else { false }
    }

    /// The same change without its state: the entity's id only.
    public var withoutState: EntityChange {
        if case .updated(let state) = self { .changed(entityID: state.entityID) } else { self }
    }
}
