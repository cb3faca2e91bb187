import Platform
/// The values a rules file took from `!secret` and `!env_var`, held against every error and warning that leaves the
/// loader: a value that reached a message anyway (a wrong notify service, backend name, template name, PushWard sound
/// or activity id) is shown as where it came from (`!secret pushward_key`), never as itself. Messages quote values
/// whole or cut (to 37 or 80 characters), so those cuts are hidden too.
struct SecretValues {
    /// Each text to hide and what shows instead, longest first (a value containing another is replaced whole).
    private let replacements: [(text: String, source: String)]

    /// Values shorter than this are hidden only where quoted: a bare two-letter word may be any word of a message.
    static let shortest = 4

    init(_ root: YAMLNode) {
        var found: [(String, String)] = []
        func walk(_ node: YAMLNode) {
            if let source = node.secretSource, let text = node.scalar, !text.isEmpty {
                found.append(("\"" + text + "\"", source))
                for cut in [text, String(text.unicodeScalars.prefix(80)), String(text.prefix(37))] where cut.count >= Self.shortest {
                    found.append((cut, source))
                }
            }
            switch node.kind {
            case .scalar: break
            case .sequence(let items): items.forEach(walk)
            case .mapping(let entries): for (key, value) in entries { walk(key); walk(value) }
            }
        }
        walk(root)
        replacements = found.sorted { $0.0.count > $1.0.count }
    }

    func hiding(_ error: ConfigError) -> ConfigError {
        let message = hiding(error.message), path = hiding(error.path)
        return message == error.message && path == error.path ? error : ConfigError(error.location, path: path, message)
    }

    /// A message or a path (`activities.<a key from !secret>.progress`) with every secret value shown as its source.
    func hiding(_ text: String) -> String {
        var out = text
        for (secret, source) in replacements where out.containsText(secret) { out = out.replacingAll(secret, with: source) }
        return out
    }

    func hiding(_ notes: RuleNotes) -> RuleNotes {
        var hidden = RuleNotes()
        hidden.warnings = notes.warnings.map(hiding)
        hidden.coercions = notes.coercions.map(hiding)
        return hidden
    }
}
