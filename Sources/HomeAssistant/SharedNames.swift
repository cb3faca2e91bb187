/// One instance of each name that many entities repeat, so it is stored once rather than once per entity: the
/// watched entity ids (the rules already hold them) and attribute names such as `unit_of_measurement`.
///
/// Names of up to 15 UTF-8 bytes live inside the `String` value itself and are passed through untouched.
struct SharedNames: Sendable {
    /// Sorted: looked up by binary search, so sharing the rules' ids costs no second table.
    private var entityIDs: [String] = []
    private var attributeNames: Set<String> = []
    /// Attribute names come from integrations, not from us: past this many, new ones are kept unshared.
    static let attributeNameLimit = 1_024

    /// The ids to share from now on, sorted.
    mutating func share(entityIDs sorted: [String]) {
        entityIDs = sorted
    }

    /// The watched id's own instance when `id` is one of them.
    func entityID(_ id: String) -> String {
        guard !Self.isInline(id) else { return id }
        let index = entityIDs.sortedPosition(of: id) { $0 }
        return index < entityIDs.count && entityIDs[index] == id ? entityIDs[index] : id
    }

    mutating func attributeName(_ name: String) -> String {
        guard !Self.isInline(name) else { return name }
        if let index = attributeNames.firstIndex(of: name) { return attributeNames[index] }
        if attributeNames.count < Self.attributeNameLimit { attributeNames.insert(name) }
        return name
    }

    private static func isInline(_ name: String) -> Bool { name.utf8.count <= 15 }
}
