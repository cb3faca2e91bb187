import JSON
import Platform

// One entity's diff in a `subscribe_entities` event, read and applied by the store.
extension EntityStore {
    /// A diff: `+` sets state, attributes and times; then `-` removes attributes. Read whole, then applied at once:
    /// the state is shared with the engine, so its first change copies it, and only one change should. The context
    /// (`c`) is checked and dropped: nothing LiveBridge does reads it.
    ///
    /// Read member by member with the keys Home Assistant writes tried first as they stand in the text, any other
    /// spelling (an escape, a space before the colon, an unknown key) through the general key reading.
    struct Diff {
        var newState: String?
        var lastChanged: Double?, lastUpdated: Double?
        var setAttributes: [EntityAttributes.Element] = []
        var removedKeys: [String] = []

        init() {}

        /// Empties this diff for the next one, keeping its room.
        mutating func reset() {
            newState = nil
            lastChanged = nil
            lastUpdated = nil
            if !setAttributes.isEmpty { setAttributes.removeAll(keepingCapacity: setAttributes.capacity <= 64) }
            if !removedKeys.isEmpty { removedKeys.removeAll(keepingCapacity: removedKeys.capacity <= 64) }
        }

        /// Reads one entity's diff into this (empty) value.
        mutating func read(_ reader: inout JSONReader, names: inout SharedNames) throws {
            guard reader.nextKind == .object else { try reader.skipValue(); return }
            guard try reader.beginObject() else { return }
            repeat {
                if reader.consume(#""+":"#) {
                    try readAdditions(&reader, names: &names)
                } else if reader.consume(#""-":"#) {
                    try readRemovals(&reader)
                } else {
                    switch try reader.readKey() {
                    case "+": try readAdditions(&reader, names: &names)
                    case "-": try readRemovals(&reader)
                    default: try reader.skipValue()
                    }
                }
            } while try reader.nextMember()
        }

        private enum Addition { case state, attributes, lastChanged, lastUpdated, other }

        /// `+`: what is set.
        private mutating func readAdditions(_ reader: inout JSONReader, names: inout SharedNames) throws {
            guard reader.nextKind == .object else { try reader.skipValue(); return }
            guard try reader.beginObject() else { return }
            repeat {
                let addition: Addition
                // In the order Home Assistant writes them.
                if reader.consume(#""s":"#) { addition = .state }
                else if reader.consume(#""lc":"#) { addition = .lastChanged }
                else if reader.consume(#""lu":"#) { addition = .lastUpdated }
                else if reader.consume(#""c":"#) { addition = .other }
                else if reader.consume(#""a":"#) { addition = .attributes }
                else {
                    switch try reader.readKey() {
                    case "s": addition = .state
                    case "a": addition = .attributes
                    case "lc": addition = .lastChanged
                    case "lu": addition = .lastUpdated
                    default: addition = .other
                    }
                }
                switch addition {
                case .state: newState = try reader.readStringIfPresent() ?? newState
                case .attributes:
                    guard reader.nextKind == .object else { try reader.skipValue(); break }
                    guard try reader.beginObject() else { break }
                    repeat {
                        let name = names.attributeName(try reader.readKey().string)
                        setAttributes.append((name, try reader.readValue()))
                    } while try reader.nextMember()
                case .lastChanged: lastChanged = try readTime(&reader) ?? lastChanged
                case .lastUpdated: lastUpdated = try readTime(&reader) ?? lastUpdated
                case .other: try reader.skipValue()
                }
            } while try reader.nextMember()
        }

        /// `-`: the attributes removed, `{"a":[names]}`.
        private mutating func readRemovals(_ reader: inout JSONReader) throws {
            guard reader.nextKind == .object else { try reader.skipValue(); return }
            guard try reader.beginObject() else { return }
            repeat {
                guard try reader.readKey() == "a", reader.nextKind == .array else { try reader.skipValue(); continue }
                try reader.readArray { reader in
                    if let name = try reader.readStringIfPresent() { self.removedKeys.append(name) }
                }
            } while try reader.nextMember()
        }

        /// Changes `state` in place; returns it as changed.
        func apply(to state: inout EntityState) -> EntityState {
            applyInPlace(to: &state)
            return state
        }

        func applyInPlace(to state: inout EntityState) {
            state.apply(state: newState, lastChanged: lastChanged, lastUpdated: lastUpdated,
                        setting: setAttributes, removing: removedKeys)
        }
    }

    /// `lc`/`lu`: seconds since 1970, taken only if Python's datetime could hold them (Home Assistant cannot send
    /// more); a time such as 9.2e12 or 1e999999 (infinity) is ignored as if absent, never stored.
    static func readTime(_ reader: inout JSONReader) throws -> Double? {
        try reader.readDoubleIfPresent().flatMap(Timestamp.checked)
    }
}
