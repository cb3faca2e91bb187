/// The variables `set` and `for` make while a template renders: a for loop's body has a scope of its own (a `set`
/// inside it is gone after it, as in Jinja); a namespace's attributes change where the namespace was made.
final class TemplateScope {
    let parent: TemplateScope?
    private var values: [String: TemplateValue] = [:]

    init(parent: TemplateScope?) { self.parent = parent }

    func lookup(_ name: String) -> TemplateValue? { values[name] ?? parent?.lookup(name) }

    func set(_ name: String, _ value: TemplateValue) { values[name] = value }

    /// `{% set ns.attribute = value %}`: the namespace is changed in the scope that holds it.
    func setAttribute(_ name: String, _ attribute: String, _ value: TemplateValue) throws(EvaluationError) {
        if case .mapping(var members)? = values[name] {
            members[attribute] = value
            values[name] = .mapping(members)
            return
        }
        guard values[name] == nil, let parent else {
            throw EvaluationError("\(name) is not a namespace: make it with {% set \(name) = namespace() %}")
        }
        try parent.setAttribute(name, attribute, value)
    }
}

/// Renders a template's nodes to text, as Jinja: each expression's value as Python's str() gives it.
struct TemplateRenderer {
    let context: EvaluationContext
    init(context: EvaluationContext) { self.context = context }

    /// How a block ended: at its end, or at a `{% break %}` / `{% continue %}` the enclosing loop acts on.
    enum Flow { case normal, breakLoop, continueLoop }

    @discardableResult
    func render(_ nodes: [TemplateNode], into out: inout String, scope: TemplateScope) throws(EvaluationError) -> Flow {
        let evaluator = TemplateEvaluator(context: context, scope: scope)
        for node in nodes {
            switch node {
            case .loopBreak: return .breakLoop
            case .loopContinue: return .continueLoop
            case .unpacking(let names, let value):
                try Self.bind(names, to: try evaluator.evaluate(value), in: scope)
            case .text(let text):
                try EvaluationLimits.checkLength(out.utf8.count + text.utf8.count, "the template's output")
                try RenderBudget.spendBuilding(text.utf8.count, "the template's text")
                out += text
            case .expression(let expression):
                let value = try evaluator.evaluate(expression)
                if case .string = value {} else { try EvaluationLimits.checkPrintable(value, "an expression's value") }
                let text = value.text
                try EvaluationLimits.checkLength(out.utf8.count + text.utf8.count, "the template's output")
                try RenderBudget.spendBuilding(text.utf8.count, "an expression's text")
                out += text
            case .conditional(let branches, let otherwise):
                var taken: [TemplateNode]?
                for branch in branches where try evaluator.evaluate(branch.condition).isTruthy {
                    taken = branch.body
                    break
                }
                let flow = try render(taken ?? otherwise, into: &out, scope: scope)
                if flow != .normal { return flow }
            case .loop(let names, let itemsExpression, let filter, let body, let otherwise):
                var items = try Self.iterate(try evaluator.evaluate(itemsExpression))
                if let filter {
                    var kept: [TemplateValue] = []
                    for item in items {
                        let candidate = TemplateScope(parent: scope)
                        try Self.bind(names, to: item, in: candidate)
                        if try TemplateEvaluator(context: context, scope: candidate).evaluate(filter).isTruthy { kept.append(item) }
                    }
                    items = kept
                }
                guard !items.isEmpty else {
                    let flow = try render(otherwise, into: &out, scope: scope)
                    if flow != .normal { return flow }
                    continue
                }
                for (index, item) in items.enumerated() {
                    try RenderBudget.spend(1, "a loop's pass")
                    let inner = TemplateScope(parent: scope)
                    try Self.bind(names, to: item, in: inner)
                    inner.set("loop", .mapping([
                        "index": .int(index + 1), "index0": .int(index), "revindex": .int(items.count - index),
                        "revindex0": .int(items.count - index - 1), "first": .bool(index == 0),
                        "last": .bool(index == items.count - 1), "length": .int(items.count),
                    ]))
                    let flow = try render(body, into: &out, scope: inner)
                    try EvaluationLimits.checkLength(out.utf8.count, "the loop's output")
                    if flow == .breakLoop { break }
                }
            case .capture(let name, let body):
                var text = ""
                try render(body, into: &text, scope: scope)
                scope.set(name, .string(text))
            case .assignment(let name, let attribute, let expression):
                let value = try evaluator.evaluate(expression)
                if let attribute {
                    // Past what freeing, printing or comparing it can recurse through, a loop could nest it deeper.
                    try EvaluationLimits.checkKeptNesting(value, "{% set \(name).\(attribute) %}")
                    try scope.setAttribute(name, attribute, value)
                } else {
                    scope.set(name, value)
                }
            }
        }
        return .normal
    }

    /// What `for` walks: a list's items, a mapping's keys, a string's characters.
    static func iterate(_ value: TemplateValue) throws(EvaluationError) -> [TemplateValue] {
        switch value {
        case .list(let items): return items
        case .mapping(let members): return members.keys.map(TemplateValue.string)
        case .string(let s): return PythonText.characters(s).map(TemplateValue.string)
        case .undefined: return []
        default: throw EvaluationError("\(value.typeName) \(value.repr) is not iterable")
        }
    }

    /// `for a, b in pairs`: each item unpacked into the names.
    static func bind(_ names: [String], to item: TemplateValue, in scope: TemplateScope) throws(EvaluationError) {
        guard names.count > 1 else { scope.set(names[0], item); return }
        guard case .list(let parts) = item, parts.count == names.count else {
            throw EvaluationError("cannot unpack \(item.typeName) \(item.repr) into \(names.count) names")
        }
        for (name, part) in zip(names, parts) { scope.set(name, part) }
    }
}
