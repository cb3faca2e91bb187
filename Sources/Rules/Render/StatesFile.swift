import FoundationEssentials
public import HomeAssistant
public import JSON
import Platform

/// Entity states in the shape of Home Assistant's `GET /api/states` (a list of state objects), for `render` and tests.
public enum StatesFile {
    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func load(path: String) throws -> [String: EntityState] {
        try loadInOrder(path: path).states
    }

    /// The states and each entity's place in the file, which is Home Assistant's order when the file is what
    /// `GET /api/states` gave: templates iterate `states` in it.
    public static func loadInOrder(path: String) throws -> (states: [String: EntityState], order: [String]) {
        guard let data = FileManager.default.contents(atPath: path) else { throw FormatError(description: "cannot read \(path)") }
        let json: JSONValue
        let bytes = Array(data)
        do { json = try JSONParser.parse(bytes) } catch { throw FormatError(description: "\(path): \(error)") }
        return try parseInOrder(json, source: path, attributeOrders: attributeOrders(bytes))
    }

    /// Each item's attribute names in the order the file writes them (a parsed object keeps none): Home Assistant's
    /// templates iterate and print attributes in it.
    static func attributeOrders(_ bytes: [UInt8]) -> [[String]]? {
        try? JSONText(bytes[...]).read { reader in
            var orders: [[String]] = []
            guard reader.nextKind == .array else { return orders }
            try reader.readArray { reader in
                var names: [String] = []
                if reader.nextKind == .object {
                    try reader.readMembers { reader, key in
                        guard key == "attributes", reader.nextKind == .object else { try reader.skipValue(); return }
                        names = []
                        try reader.readObject { reader, name in names.append(name); try reader.skipValue() }
                    }
                } else {
                    try reader.skipValue()
                }
                orders.append(names)
            }
            return orders
        }
    }

    public static func parse(_ json: JSONValue, source: String = "states") throws -> [String: EntityState] {
        try parseInOrder(json, source: source).states
    }

    /// The states, and each entity's place: where it first appears, as a Python dict keeps a key's first place.
    /// `attributeOrders`, each item's attribute names as the text wrote them, orders its attributes (by name without).
    public static func parseInOrder(_ json: JSONValue, source: String = "states",
                                    attributeOrders: [[String]]? = nil) throws -> (states: [String: EntityState], order: [String]) {
        guard case .array(let items) = json else { throw FormatError(description: "\(source): expected a list of states, as GET /api/states returns") }
        var states: [String: EntityState] = [:]
        var order: [String] = []
        for (index, item) in items.enumerated() {
            guard let id = item["entity_id"]?.stringValue, EntityID.isValid(id) else {
                throw FormatError(description: "\(source): item \(index) has no valid entity_id")
            }
            guard let state = item["state"]?.stringValue else { throw FormatError(description: "\(source): \(id) has no state") }
            func time(_ key: String) throws -> Double? {
                guard let text = item[key]?.stringValue else { return nil }
                guard let epoch = Timestamp.epoch(fromISO8601: text) else {
                    throw FormatError(description: "\(source): \(id).\(key) \"\(text)\" is not an ISO 8601 time")
                }
                return epoch
            }
            let changed = try time("last_changed") ?? 0
            if states[id] == nil { order.append(id) }
            let given = item["attributes"]?.objectValue ?? [:]
            var attributes = EntityAttributes(given)
            if let orders = attributeOrders, index < orders.count {
                // A name written twice is one member, at its first place with its last value, as Python reads it.
                var seen: Set<String> = []
                let names = orders[index].filter { seen.insert($0).inserted }
                if names.count == given.count, names.allSatisfy({ given[$0] != nil }) {
                    attributes = EntityAttributes(names.map { ($0, given[$0]!) })
                }
            }
            states[id] = EntityState(entityID: id, state: state, attributes: attributes,
                                     lastChanged: changed, lastUpdated: try time("last_updated") ?? changed)
        }
        return (states, order)
    }
}
