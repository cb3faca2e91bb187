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
    /// Where a scalar's characters are in the file, so an error inside a multi-line template points at its line.
    public var layout: ScalarLayout = .inline
    /// Where a secret value came from, as written (`!secret ha_token`, `!env_var AIVI_TOKEN`): errors show this,
    /// never the value.
    public var secretSource: String?
    /// Came from `!secret` or `!env_var`: the value is never shown in an error.
    public var isSecret: Bool { secretSource != nil }

    public init(_ kind: Kind, at location: SourceLocation, isPlain: Bool = false, secretSource: String? = nil) {
        self.kind = kind
        self.location = location
        self.isPlain = isPlain
        self.secretSource = secretSource
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
        if let secretSource { return secretSource }
        guard let text = scalar else { return kindName }
        return "\"" + (text.count > 40 ? String(text.prefix(37)) + "…" : text) + "\""
    }
}

/// Where a scalar's text sits in its file.
public enum ScalarLayout: Sendable, Equatable {
    /// On the line it starts on (a quoted one's text one column after its start).
    case inline
    /// A literal block (`|`): the text's line k is the file's line `firstLine + k`, indented `indentation` columns.
    case literal(firstLine: Int, indentation: Int)
    /// Folded (`>`) or a flow scalar over several lines: its lines are joined, so only its start is known.
    case folded
}
