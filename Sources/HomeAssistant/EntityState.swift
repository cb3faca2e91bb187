import JSON

/// The full state of one Home Assistant entity, as `get_states` would give it.
public struct EntityState: Sendable, Equatable {
    public var entityID: String
    public var state: String
    public var attributes: [String: JSONValue]
    /// Seconds since 1970, as Home Assistant sends them.
    public var lastChanged: Double
    public var lastUpdated: Double
    /// The context id of the change that produced this state, when known.
    public var contextID: String?

    public init(entityID: String, state: String, attributes: [String: JSONValue] = [:],
                lastChanged: Double, lastUpdated: Double? = nil, contextID: String? = nil) {
        self.entityID = entityID
        self.state = state
        self.attributes = attributes
        self.lastChanged = lastChanged
        self.lastUpdated = lastUpdated ?? lastChanged
        self.contextID = contextID
    }

    /// From the full form `get_states` and `state_changed` give (ISO 8601 times, `context.id`); nil without a state.
    public init?(entityID: String, fullState: JSONValue) {
        guard let state = fullState["state"]?.stringValue else { return nil }
        let lastChanged = fullState["last_changed"]?.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
        let lastUpdated = fullState["last_updated"]?.stringValue.flatMap(Timestamp.epoch(fromISO8601:))
        self.init(entityID: entityID, state: state, attributes: fullState["attributes"]?.objectValue ?? [:],
                  lastChanged: lastChanged ?? 0, lastUpdated: lastUpdated ?? lastChanged ?? 0,
                  contextID: fullState["context"]?["id"]?.stringValue)
    }

    /// `{"entity_id":…,"state":…,"attributes":{…},"last_changed":…,"last_updated":…}` with ISO 8601 times.
    public var jsonValue: JSONValue {
        .object([
            "entity_id": .string(entityID),
            "state": .string(state),
            "attributes": .object(attributes),
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
        JSONValue.object(attributes).write(to: &out)
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
