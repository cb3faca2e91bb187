import JSON

/// The local copy of the entities LiveBridge watches, kept from `subscribe_entities`' compressed messages.
///
/// A snapshot (`a` in the first event of a subscription) replaces the store: an entity that vanished
/// while disconnected is removed, not kept. Later events carry `a` (added), `c` (changed: `+` sets,
/// `-` removes attributes) and `r` (removed). Every method returns what changed, in order.
public struct EntityStore: Sendable {
    public private(set) var states: [String: EntityState] = [:]

    public init() {}

    public subscript(entityID: String) -> EntityState? { states[entityID] }
    public var count: Int { states.count }

    /// Replaces everything with a snapshot's `a` object. Unchanged entities are not reported.
    public mutating func replace(withSnapshot event: JSONValue) -> [EntityChange] {
        var fresh: [String: EntityState] = [:]
        if let added = event["a"]?.objectValue {
            fresh.reserveCapacity(added.count)
            for (id, compressed) in added {
                if let state = Self.decodeFull(id: id, compressed) { fresh[id] = state }
            }
        }
        var changes: [EntityChange] = []
        for id in states.keys.sorted() where fresh[id] == nil {
            changes.append(.removed(entityID: id))
        }
        for id in fresh.keys.sorted() where states[id] != fresh[id] {
            changes.append(.updated(fresh[id]!))
        }
        states = fresh
        return changes
    }

    /// Applies a later event of the subscription.
    public mutating func apply(_ event: JSONValue) -> [EntityChange] {
        var changes: [EntityChange] = []
        if let added = event["a"]?.objectValue {
            for id in added.keys.sorted() {
                guard let state = Self.decodeFull(id: id, added[id]!) else { continue }
                states[id] = state
                changes.append(.updated(state))
            }
        }
        if let changed = event["c"]?.objectValue {
            for id in changed.keys.sorted() {
                guard var state = states[id], let diff = changed[id] else { continue }
                Self.applyDiff(diff, to: &state)
                states[id] = state
                changes.append(.updated(state))
            }
        }
        if let removed = event["r"]?.arrayValue {
            for case .string(let id) in removed where states.removeValue(forKey: id) != nil {
                changes.append(.removed(entityID: id))
            }
        }
        return changes
    }

    static func decodeFull(id: String, _ compressed: JSONValue) -> EntityState? {
        guard let state = compressed["s"]?.stringValue else { return nil }
        let lastChanged = compressed["lc"]?.doubleValue ?? 0
        return EntityState(entityID: id, state: state, attributes: compressed["a"]?.objectValue ?? [:],
                           lastChanged: lastChanged, lastUpdated: compressed["lu"]?.doubleValue ?? lastChanged,
                           contextID: contextID(compressed["c"]))
    }

    static func applyDiff(_ diff: JSONValue, to state: inout EntityState) {
        if let plus = diff["+"] {
            if let s = plus["s"]?.stringValue { state.state = s }
            if let attributes = plus["a"]?.objectValue {
                for (key, value) in attributes { state.attributes[key] = value }
            }
            if let lc = plus["lc"]?.doubleValue {
                state.lastChanged = lc
                state.lastUpdated = lc
            }
            if let lu = plus["lu"]?.doubleValue { state.lastUpdated = lu }
            if let context = contextID(plus["c"]) { state.contextID = context }
        }
        if let removedKeys = diff["-"]?["a"]?.arrayValue {
            for case .string(let key) in removedKeys { state.attributes[key] = nil }
        }
    }

    private static func contextID(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let id): return id
        case .object(let context): return context["id"]?.stringValue
        default: return nil
        }
    }
}
