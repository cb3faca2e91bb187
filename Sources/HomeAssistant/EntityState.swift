import JSON

/// The full state of one Home Assistant entity, as `get_states` would give it.
///
/// A value with its fields in one shared box: the connection's store, the engine and the change on its way between them
/// hold the same state, so each entity is kept once however many hold it. Copied on write.
public struct EntityState: Sendable, Equatable {
    private var storage: Storage

    public var entityID: String {
        get { storage.entityID }
        set { unique().entityID = newValue }
    }
    public var state: String {
        get { storage.state }
        set { unique().state = newValue }
    }
    public var attributes: EntityAttributes {
        get { storage.attributes }
        _modify {
            let storage = unique()
            yield &storage.attributes
        }
    }
    /// Seconds since 1970, as Home Assistant sends them.
    public var lastChanged: Double {
        get { storage.lastChanged }
        set { unique().lastChanged = newValue }
    }
    public var lastUpdated: Double {
        get { storage.lastUpdated }
        set { unique().lastUpdated = newValue }
    }
    /// The context id of the change that produced this state, when known.
    public var contextID: String? {
        get { storage.contextID }
        set { unique().contextID = newValue }
    }

    public init(entityID: String, state: String, attributes: EntityAttributes = [:],
                lastChanged: Double, lastUpdated: Double? = nil, contextID: String? = nil) {
        storage = Storage(entityID: entityID, state: state, attributes: attributes, lastChanged: lastChanged,
                          lastUpdated: lastUpdated ?? lastChanged, contextID: contextID)
    }

    public static func == (lhs: EntityState, rhs: EntityState) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.fields == rhs.storage.fields
    }

    /// The box, copied first when someone else holds it too.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// Mutated only through `unique()`, so only while this state is its sole holder: sharing it across threads is safe.
    private final class Storage: @unchecked Sendable {
        var entityID: String
        var state: String
        var attributes: EntityAttributes
        var lastChanged: Double
        var lastUpdated: Double
        var contextID: String?

        init(entityID: String, state: String, attributes: EntityAttributes, lastChanged: Double, lastUpdated: Double,
             contextID: String?) {
            self.entityID = entityID
            self.state = state
            self.attributes = attributes
            self.lastChanged = lastChanged
            self.lastUpdated = lastUpdated
            self.contextID = contextID
        }

        func copy() -> Storage {
            Storage(entityID: entityID, state: state, attributes: attributes, lastChanged: lastChanged,
                    lastUpdated: lastUpdated, contextID: contextID)
        }

        var fields: Fields { Fields(entityID: entityID, state: state, attributes: attributes, lastChanged: lastChanged,
                                    lastUpdated: lastUpdated, contextID: contextID) }
    }

    private struct Fields: Equatable {
        let entityID: String
        let state: String
        let attributes: EntityAttributes
        let lastChanged: Double
        let lastUpdated: Double
        let contextID: String?
    }

    /// From the full form `get_states` and `state_changed` give (ISO 8601 times, `context.id`); nil without a state.
    public init?(entityID: String, fullState: JSONValue) {
        guard let state = fullState["state"]?.stringValue else { return nil }
        let lastChanged = fullState["last_changed"]?.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
        let lastUpdated = fullState["last_updated"]?.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
        self.init(entityID: entityID, state: state, attributes: EntityAttributes(fullState["attributes"]?.objectValue ?? [:]),
                  lastChanged: lastChanged ?? 0, lastUpdated: lastUpdated ?? lastChanged ?? 0,
                  contextID: fullState["context"]?["id"]?.stringValue)
    }

    /// `{"entity_id":…,"state":…,"attributes":{…},"last_changed":…,"last_updated":…}` with ISO 8601 times.
    public var jsonValue: JSONValue {
        .object([
            "entity_id": .string(entityID),
            "state": .string(state),
            "attributes": .object(attributes.dictionary),
            "last_changed": .string(Timestamp.iso8601(lastChanged)),
            "last_updated": .string(Timestamp.iso8601(lastUpdated)),
        ])
    }

    /// The same line `livebridge watch` prints, with keys in the order people read them.
    public var jsonLine: String {
        var out = "{\"entity_id\":"
        JSONValue.writeString(entityID, to: &out)
        out += ",\"state\":"
        JSONValue.writeString(state, to: &out)
        out += ",\"attributes\":"
        JSONValue.object(attributes.dictionary).write(to: &out)
        out += ",\"last_changed\":\"" + Timestamp.iso8601(lastChanged) + "\",\"last_updated\":\""
        out += Timestamp.iso8601(lastUpdated) + "\"}"
        return out
    }
}

/// What happened to one entity.
public enum EntityChange: Sendable, Equatable {
    case updated(EntityState)
    case removed(entityID: String)

    public var entityID: String {
        switch self {
        case .updated(let state): return state.entityID
        case .removed(let id): return id
        }
    }
}
