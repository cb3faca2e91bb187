/// Which entities LiveBridge keeps: the ids its rules name, whole domains a template iterates (`states.light`), or
/// every entity (`states | …`, `expand` of a group, whose members can change).
public struct EntitySelection: Sendable, Equatable {
    /// Sorted, without repeats.
    public let entityIDs: [String]
    public let domains: Set<String>
    public let everything: Bool
    private let ids: Set<String>

    public init(entityIDs: some Sequence<String>, domains: Set<String> = [], everything: Bool = false) {
        let ids = Set(entityIDs)
        self.ids = ids
        self.entityIDs = ids.sorted()
        self.domains = domains
        self.everything = everything
    }

    public static let nothing = EntitySelection(entityIDs: [])

    /// Whether Home Assistant must send every entity: `subscribe_entities` filters by id only.
    public var needsEveryEntity: Bool { everything || !domains.isEmpty }

    public func contains(_ entityID: String) -> Bool {
        if everything || ids.contains(entityID) { return true }
        guard !domains.isEmpty, let dot = entityID.firstIndex(of: ".") else { return false }
        return domains.contains(String(entityID[..<dot]))
    }

    /// All of these together, the ids sorted once (a rules file combines one selection per template).
    public static func combining(_ selections: some Sequence<EntitySelection>) -> EntitySelection {
        var ids = Set<String>(), domains = Set<String>(), everything = false
        for selection in selections {
            ids.formUnion(selection.ids)
            domains.formUnion(selection.domains)
            everything = everything || selection.everything
        }
        return EntitySelection(entityIDs: ids, domains: domains, everything: everything)
    }
}

extension EntitySelection: ExpressibleByArrayLiteral {
    /// Named entities only: `["sensor.a", "timer.b"]`.
    public init(arrayLiteral entityIDs: String...) { self.init(entityIDs: entityIDs) }
}
