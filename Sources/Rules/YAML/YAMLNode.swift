/// A YAML node with where it was written. Scalars keep their text: `on` stays "on"; the schema decides types.
public struct YAMLNode: Sendable {
    public enum Kind: Sendable {
        case scalar(String)
        case sequence([YAMLNode])
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    public var kind: Kind
    public var location: SourceLocation
    /// True for a plain (unquoted) scalar: only those may mean null, true or a number.
    public var isPlain: Bool
    /// Came from `!secret` or `!env_var`: the value is never shown in an error.
    public var isSecret: Bool

    public init(_ kind: Kind, at location: SourceLocation, isPlain: Bool = false, isSecret: Bool = false) {
        self.kind = kind
        self.location = location
        self.isPlain = isPlain
        self.isSecret = isSecret
    }

    public var scalar: String? {
        if case .scalar(let text) = kind { return text }
        return nil
    }

    /// A plain `~`, `null` or empty scalar.
    public var isNull: Bool {
        guard isPlain, let text = scalar else { return false }
        return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    public var kindName: String {
        switch kind {
        case .scalar: return isNull ? "null" : "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// How the value reads in an error: quoted, shortened, or hidden when secret.
    public var quoted: String {
        if isSecret { return "<secret>" }
        guard let text = scalar else { return kindName }
        return "\"" + (text.count > 40 ? String(text.prefix(37)) + "…" : text) + "\""
    }
}
