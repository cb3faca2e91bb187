import JSON

/// A `state_changed` event, for the `entity_source: state_changed` path: only `data.entity_id` is decoded until it is
/// known to be one of the watched entities, since most of these events are for entities no rule reads.
enum StateChangedEvent {
    /// The watched entity and its new state (`.null` when it was removed); nil for any other entity.
    static func read(_ event: JSONText, watching watched: EntitySelection) throws -> (entityID: String, newState: JSONValue)? {
        try event.read { reader in
            guard reader.nextKind == .object else { try reader.skipValue(); return nil }
            var found: (entityID: String, newState: JSONValue)?
            try reader.readObject { reader, key in
                guard key == "data", reader.nextKind == .object else { return }
                var id: String?
                var newState: Range<Int>?
                try reader.readObject { reader, key in
                    switch key {
                    case "entity_id": id = try reader.readStringIfPresent()
                    case "new_state": newState = try reader.skipValueRange()
                    default: try reader.skipValue()
                    }
                }
                guard let id, watched.contains(id) else { return }
                var state = newState.map { reader.subreader($0) }
                found = (id, try state?.readValue() ?? .null)
            }
            return found
        }
    }
}
