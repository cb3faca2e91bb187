import Platform
import JSON
import LiveActivity
import Templates

/// Turns a rule's YAML fields into a `FieldTree`, checking them against the payload schema:
/// unknown keys, missing required keys and wrong constants are errors at their line and column;
/// templates are compiled now and their results checked at render time.
struct FieldCompiler {
    var errors: [ConfigError] = []
    /// False for Home Assistant's own templates (blueprints): they are left to Home Assistant, only fixed values are checked.
    var compilesTemplates = true

    mutating func compile(_ node: YAMLNode, as schema: FieldSchema, path: String) -> FieldTree? {
        if case .scalar(let text) = node.kind, Self.isTemplate(text) {
            return compileTemplate(text, node: node, path: path, schema: schema)
        }
        switch (schema, node.kind) {
        case (.object(let object), .mapping), (.scalarOrObject(_, let object), .mapping):
            return compileObject(node, object, path: path)
        case (.tagged(let key, let variants), .mapping(let entries)):
            guard let tagNode = entries.first(where: { $0.key.scalar == key })?.value else {
                errors.append(ConfigError(node.location, path: path, "\(key) is required: " + variants.keys.sorted().joined(separator: " | ")))
                return nil
            }
            guard let tag = tagNode.scalar, !Self.isTemplate(tag), let variant = variants[tag] else {
                let given = tagNode.scalar ?? ""
                var message = Self.isTemplate(given) ? "\(key) must be fixed, not a template" : "unknown \(key) \(tagNode.quoted)"
                message += Suggestion.didYouMean(given, in: variants.keys.sorted(),
                                                 otherwise: Self.isTemplate(given) ? "" : "; expected one of: " + variants.keys.sorted().joined(separator: ", "))
                errors.append(ConfigError(tagNode.location, path: joinedPath(path, key), message))
                return nil
            }
            return compileObject(node, variant, path: path)
        case (.list(let element, let count), .sequence(let items)):
            if !count.contains(items.count) {
                errors.append(ConfigError(node.location, path: path, "has \(items.count) item\(items.count == 1 ? "" : "s"); \(count.lowerBound)–\(count.upperBound) allowed"))
            }
            var compiled: [FieldTree] = []
            for (index, item) in items.enumerated() {
                if let tree = compile(item, as: element, path: "\(path)[\(index)]") { compiled.append(tree) }
            }
            return .list(compiled)
        case (.map(let element, let keyMaxLength, let count), .mapping(let entries)):
            if !count.contains(entries.count) {
                errors.append(ConfigError(node.location, path: path, "has \(entries.count) name\(entries.count == 1 ? "" : "s"); \(count.lowerBound)–\(count.upperBound) allowed"))
            }
            var compiled: [(String, FieldTree)] = []
            for (key, value) in entries {
                let name = key.scalar ?? ""
                guard !name.isEmpty, name.count <= keyMaxLength else {
                    errors.append(ConfigError(key.location, path: joinedPath(path, name), "a name must be 1–\(keyMaxLength) characters"))
                    continue
                }
                if let tree = compile(value, as: element, path: joinedPath(path, name)) { compiled.append((name, tree)) }
            }
            return .object(compiled)
        case (_, .scalar):
            let value = Self.json(node)
            let (_, issues) = PayloadNormalizer.normalize(value, as: schema)
            for issue in issues {
                errors.append(ConfigError(node.location, path: joinedPath(path, issue.path), redact(issue.message, node)))
            }
            return issues.isEmpty ? .constant(value) : nil
        default:
            errors.append(ConfigError(node.location, path: path, "expected \(Self.expectation(schema)), got \(node.kindName)"))
            return nil
        }
    }

    private mutating func compileObject(_ node: YAMLNode, _ schema: ObjectSchema, path: String) -> FieldTree? {
        guard case .mapping(let entries) = node.kind else { return nil }
        var fields: [(String, FieldTree)] = []
        var ok = true
        for (key, value) in entries {
            let name = key.scalar ?? ""
            guard let field = schema.field(name) else {
                var message = "unknown key \"\(name)\""
                message += Suggestion.didYouMean(name, in: schema.names, otherwise: "; expected: " + schema.names.joined(separator: ", "))
                errors.append(ConfigError(key.location, path: joinedPath(path, name), message))
                ok = false
                continue
            }
            if value.isNull { continue }
            if let tree = compile(value, as: field.schema, path: joinedPath(path, name)) { fields.append((name, tree)) } else { ok = false }
        }
        for field in schema.fields where field.required && !entries.contains(where: { $0.key.scalar == field.name }) {
            errors.append(ConfigError(node.location, path: joinedPath(path, field.name), "is required"))
            ok = false
        }
        guard ok else { return nil }
        checkFixed(fields, schema, at: node, path: path)
        return .object(fields)
    }

    /// The fixed part of an object is checked whole now (segments summing to 1, a start before its end…), so check
    /// fails what every render would: an issue about a templated field waits for render time. `locate`: where a field
    /// is written, for an issue about it (else the object's place).
    mutating func checkFixed(_ fields: [(String, FieldTree)], _ schema: ObjectSchema, at node: YAMLNode, path: String,
                             locate: (String) -> SourceLocation? = { _ in nil }) {
        var fixed: [String: JSONValue] = [:]
        for (name, tree) in fields { if let value = tree.constantValue { fixed[name] = value } }
        let templated = Set(fields.filter { $0.1.constantValue == nil }.map(\.0))
        for check in schema.checks {
            for issue in check(fixed, "") {
                let field = issue.path.split(whereSeparator: { $0 == "." || $0 == "[" }).first.map(String.init) ?? ""
                guard !templated.contains(field), templated.isEmpty || !field.isEmpty else { continue }
                errors.append(ConfigError(locate(field) ?? node.location, path: joinedPath(path, issue.path), issue.message))
            }
        }
    }

    private mutating func compileTemplate(_ text: String, node: YAMLNode, path: String, schema: FieldSchema) -> FieldTree? {
        guard compilesTemplates else { return .template(Self.opaque, node.location, path: path) }
        let template: Template
        do {
            template = try Template(text)
        } catch {
            errors.append(ConfigError(Self.location(of: error.offset, in: node), path: path, "template error: \(error.message)"))
            return nil
        }
        // Text around the expression makes the result text: a number or a yes/no field could never take it.
        if let kind = Self.scalarKind(schema), let words = template.fixedText.first(where: { !$0.allSatisfy(\.isWhitespace) }) {
            errors.append(ConfigError(node.location, path: path,
                "this template always renders text (\"\(words)\" around its expression), which is never \(kind); "
                + "put only the expression inside the quotes, e.g. \"{{ … }}\""))
            return nil
        }
        return .template(template, node.location, path: path)
    }

    /// What a number-like or boolean field needs, in words; nil for fields that take text.
    static func scalarKind(_ schema: FieldSchema) -> String? {
        switch schema {
        case .number, .integer, .percentOrFraction: return "a number"
        case .boolean: return "true or false"
        default: return nil
        }
    }

    /// Where in the file a character of a template is: exact on one-line scalars (quoted ones start one column later)
    /// and in literal blocks; a folded or multi-line flow scalar gives its start.
    static func location(of offset: Int, in node: YAMLNode) -> SourceLocation {
        guard let text = node.scalar else { return node.location }
        switch node.layout {
        case .inline where !text.contains("\n"):
            return SourceLocation(file: node.location.file, line: node.location.line, column: node.location.column + offset + (node.isPlain ? 0 : 1))
        case .literal(let firstLine, let indentation):
            let before = text.prefix(max(0, offset))
            let line = before.reduce(0) { $1 == "\n" ? $0 + 1 : $0 }
            let column = before.reversed().prefix { $0 != "\n" }.count
            return SourceLocation(file: node.location.file, line: firstLine + line, column: indentation + column + 1)
        default:
            return node.location
        }
    }

    /// Stands for a value only known at run time.
    static let opaque = try! Template("{{ none }}")

    static func isTemplate(_ text: String) -> Bool {
        text.containsText("{{") || text.containsText("{%") || text.containsText("{#")
    }

    /// A YAML scalar as JSON: plain numbers and true/false become numbers and booleans; everything else stays text
    /// (`on`, `yes` and quoted values included).
    static func json(_ node: YAMLNode) -> JSONValue {
        guard let text = node.scalar else { return .null }
        guard node.isPlain else { return .string(text) }
        if node.isNull { return .null }
        switch text {
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        if let i = Int(text) { return .int(i) }
        if let d = Double(text), text.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true { return .double(d) }
        return .string(text)
    }

    static func expectation(_ schema: FieldSchema) -> String {
        switch schema {
        case .object, .tagged, .map: return "a mapping"
        case .list: return "a list"
        case .scalarOrObject: return "a name or a mapping"
        default: return "a single value"
        }
    }

    /// Secret values never appear in messages.
    private func redact(_ message: String, _ node: YAMLNode) -> String {
        guard let source = node.secretSource, let text = node.scalar, !text.isEmpty else { return message }
        return message.replacingAll(text, with: source)
    }
}
