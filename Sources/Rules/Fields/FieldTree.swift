import JSON
import LiveActivity
import Templates

/// A payload's fields as a rule gives them: constants checked at load, templates compiled at load.
indirect enum FieldTree: Sendable {
    case constant(JSONValue)
    /// A template, where it was written and the path of keys to it (for messages).
    case template(Template, SourceLocation, path: String)
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

    /// Every template in the tree with its path and where it was written, in order.
    var templateFields: [(path: String, location: SourceLocation, template: Template)] {
        switch self {
        case .constant: return []
        case .template(let t, let location, let path): return [(path, location, t)]
        case .object(let fields): return fields.flatMap { $0.1.templateFields }
        case .list(let items): return items.flatMap(\.templateFields)
        }
    }

    /// Every template in the tree, in order.
    var templates: [Template] {
        switch self {
        case .constant: return []
        case .template(let t, _, _): return [t]
        case .object(let fields): return fields.flatMap { $0.1.templates }
        case .list(let items): return items.flatMap(\.templates)
        }
    }

    /// Evaluates every template; a failing one is left out and its reason reported with its path.
    func evaluate(in context: EvaluationContext, failures: inout [PayloadIssue]) -> JSONValue? {
        switch self {
        case .constant(let value):
            return value
        case .template(let template, _, let path):
            do {
                let value = try template.evaluate(in: context)
                return value == .none ? nil : value.json
            } catch {
                failures.append(PayloadIssue(path: path, error.message))
                return nil
            }
        case .object(let fields):
            var out: [String: JSONValue] = Dictionary(minimumCapacity: fields.count)
            for (key, field) in fields {
                if let value = field.evaluate(in: context, failures: &failures) { out[key] = value }
            }
            return .object(out)
        case .list(let items):
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for item in items {
                if let value = item.evaluate(in: context, failures: &failures) { out.append(value) }
            }
            return .array(out)
        }
    }

    /// `base` with `overrides` laid over it, key by key (for `on_end`).
    static func merge(_ base: FieldTree, _ overrides: FieldTree) -> FieldTree {
        guard case .object(let baseFields) = base, case .object(let overrideFields) = overrides else { return overrides }
        var merged = baseFields
        // A formatter formats the value it was written with: a new value given without one is shown as written
        // (`on_end: {header_right: {value: Done}}` over a time_until countdown).
        if overrideFields.contains(where: { $0.0 == "value" }), !overrideFields.contains(where: { $0.0 == "formatter" }) {
            merged.removeAll { $0.0 == "formatter" }
        }
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
