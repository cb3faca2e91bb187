import JSON
import Platform

/// An entity as the simulator holds it, and its compressed forms for `subscribe_entities`.
struct SimulatedEntity: Equatable {
    var state: String
    var attributes: [String: JSONValue]
    var lastChanged: Double
    var lastUpdated: Double
    var contextID: String

    /// The `a` entry of a snapshot: `lu` omitted when equal to `lc`.
    var compressed: JSONValue {
        var entry: [String: JSONValue] = [
            "s": .string(state), "a": .object(attributes), "c": .string(contextID), "lc": .double(lastChanged),
        ]
        if lastUpdated != lastChanged { entry["lu"] = .double(lastUpdated) }
        return .object(entry)
    }

    /// The `c` entry that turns `old` into `self`.
    func diff(from old: SimulatedEntity) -> JSONValue {
        var plus: [String: JSONValue] = ["c": .string(contextID)]
        if state != old.state { plus["s"] = .string(state) }
        let changedAttributes = attributes.filter { old.attributes[$0.key] != $0.value }
        if !changedAttributes.isEmpty { plus["a"] = .object(changedAttributes) }
        if lastChanged != old.lastChanged { plus["lc"] = .double(lastChanged) } else { plus["lu"] = .double(lastUpdated) }
        var diff: [String: JSONValue] = ["+": .object(plus)]
        let removed = old.attributes.keys.filter { attributes[$0] == nil }.sorted()
        if !removed.isEmpty { diff["-"] = ["a": .array(removed.map(JSONValue.string))] }
        return .object(diff)
    }

    /// A full state object as in `get_states` and `state_changed` events.
    func full(entityID: String) -> JSONValue {
        [
            "entity_id": .string(entityID), "state": .string(state), "attributes": .object(attributes),
            "last_changed": .string(Timestamp.iso8601(lastChanged)),
            "last_reported": .string(Timestamp.iso8601(lastUpdated)),
            "last_updated": .string(Timestamp.iso8601(lastUpdated)),
            "context": ["id": .string(contextID), "parent_id": nil, "user_id": nil],
        ]
    }
}
