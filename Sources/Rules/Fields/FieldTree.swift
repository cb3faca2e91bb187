import JSON
import LiveActivity

/// A payload's fields as a rule gives them: constants checked at load, templates compiled at load.
indirect enum FieldTree: Sendable {
    case constant(JSONValue)
    case template(Template, SourceLocation)
    case object([(String, FieldTree)])
    case list([FieldTree])

    /// The value when nothing in the tree is a template.
    var constantValue: JSONValue? {
        switch self {
        case .constant(let value): return value
        case .template: return nil
        case .object(let fields):
            var out: [String: JSONValue] = [:]
            for (key, field) in fields {
                guard let value = field.constantValue else { return nil }
                out[key] = value
            }
            return .object(out)
        case .list(let items):
            var out: [JSONValue] = []
            for item in items {
                guard let value = item.constantValue else { return nil }
                out.append(value)
            }
            return .array(out)
        }
    }

    /// Every entity the templates read.
    var entityIDs: Set<String> {
        switch self {
        case .constant: return []
        case .template(let t, _): return t.entityIDs
        case .object(let fields): return fields.reduce(into: []) { $0.formUnion($1.1.entityIDs) }
        case .list(let items): return items.reduce(into: []) { $0.formUnion($1.entityIDs) }
        }
    }

    /// Evaluates every template; a failing one is left out and its reason reported with its path.
    func evaluate(in context: EvaluationContext, path: String = "", failures: inout [PayloadIssue]) -> JSONValue? {
        switch self {
        case .constant(let value):
            return value
        case .template(let template, _):
            do {
                let value = try template.evaluate(in: context)
                return value == .none ? nil : value.json
            } catch {
                failures.append(PayloadIssue(path: path, error.message))
                return nil
            }
        case .object(let fields):
            var out: [String: JSONValue] = [:]
            for (key, field) in fields {
                if let value = field.evaluate(in: context, path: path.isEmpty ? key : path + "." + key, failures: &failures) {
                    out[key] = value
                }
            }
            return .object(out)
        case .list(let items):
            return .array(items.enumerated().compactMap { index, item in
                item.evaluate(in: context, path: "\(path)[\(index)]", failures: &failures)
            })
        }
    }

    /// `base` with `overrides` laid over it, key by key (for `on_end`).
    static func merge(_ base: FieldTree, _ overrides: FieldTree) -> FieldTree {
        guard case .object(let baseFields) = base, case .object(let overrideFields) = overrides else { return overrides }
        var merged = baseFields
        for (key, value) in overrideFields {
            if let index = merged.firstIndex(where: { $0.0 == key }) {
                merged[index] = (key, merge(merged[index].1, value))
            } else {
                merged.append((key, value))
            }
        }
        return .object(merged)
    }
}
