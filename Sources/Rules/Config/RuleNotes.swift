import LiveActivity
/// What `check` says besides errors. Warnings: the file loads, but the phone will not show what it seems to say (an
/// `mdi:` icon with no SF Symbol, a bar on Island Pulse's free tier). Coercions (`check --verbose`): every change
/// LiveBridge makes on the way to a backend, so none is silent — an Aivi template shown as an Island Pulse layout or a
/// Home Assistant live update, an `mdi:` icon drawn as an SF Symbol, the free tier's default layout.
public struct RuleNotes: Sendable {
    public var warnings: [ConfigError] = []
    public var coercions: [ConfigError] = []

    public init() {}

    mutating func formUnion(_ other: RuleNotes) {
        warnings += other.warnings
        coercions += other.coercions
    }

    /// The notes of one activity, from its rule and where its keys are written.
    static func of(_ rule: ActivityRule, _ reader: MappingReader, path: String) -> RuleNotes {
        var notes = RuleNotes()
        if let node = reader["icon"] {
            let at = (node.scalar != nil ? node : (MappingReader.peek(node, "name") ?? node))
            if let icon = at.scalar, icon.hasPrefix("mdi:") {
                if let symbol = IconCatalog.symbol(forMDI: icon) {
                    notes.coercions.append(ConfigError(at.location, path: path + ".icon", "\(icon) is drawn as the SF Symbol \"\(symbol)\" (the phone draws SF Symbols)"))
                } else {
                    notes.warnings.append(ConfigError(at.location, path: path + ".icon",
                        "\(icon) has no SF Symbol LiveBridge knows, and the phone draws SF Symbols only: the icon is left out; write an SF Symbol name (timer, washer, bolt.car…) or icon: auto"))
                }
            }
        }
        let at = reader["template"]?.location ?? rule.location
        for target in rule.targets {
            if case .fromAivi(let template) = target.mapping {
                let backend = target.kind.definition.name
                notes.coercions.append(ConfigError(at, path: path + ".template",
                    "on \(target.name) (\(backend)) the Aivi \(template) template is \(target.kind.rendering.mappingNote(template: template))"))
            }
            target.rendering.notes(rule, target, at: at, path: path, into: &notes)
        }
        return notes
    }
}

extension MappingReader {
    /// A key of a mapping node, without reading the node as a whole.
    static func peek(_ node: YAMLNode, _ key: String) -> YAMLNode? {
        guard case .mapping(let entries) = node.kind else { return nil }
        return entries.first { $0.key.scalar == key }?.value
    }
}
