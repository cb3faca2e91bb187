public import HomeAssistant
import Platform

/// A field's text, compiled once: literal text, `{{ expression }}`s and the statements around them
/// (`{% if %}`, `{% for %}`, `{% set %}`, `{% raw %}`), with Jinja's whitespace control (`{%-`, `-%}`) and comments.
///
/// A template that is exactly one expression yields that expression's value with its type (a float stays a float);
/// anything else is text, as Jinja renders it.
///
/// A class of constants: an evaluation holds one reference to it, not a copy of its fields.
public final class Template: Sendable {
    public struct CompileError: Error, Equatable, Sendable, CustomStringConvertible {
        /// Character offset in the template text.
        public let offset: Int
        public let message: String
        /// Set when the template uses what only Home Assistant computes: why.
        public var homeAssistantOnly: String? = nil
        /// Set when the error is a name nothing defines.
        public var unknownName: String? = nil
        public var description: String { message }
    }

    /// Why Home Assistant renders this template rather than LiveBridge (`area_name reads Home Assistant's
    /// registries`); nil for the templates LiveBridge evaluates itself, nearly all.
    public let renderedByHomeAssistant: String?
    /// The template's text as written: what Home Assistant is asked to render.
    public let source: String

    let nodes: [TemplateNode]
    /// The entities this template reads, found at load, sorted. An array rather than a set: one template may read
    /// thousands, and they stay for the life of the rules.
    public let sortedEntityIDs: [String]
    /// The same, as a set.
    public var entityIDs: Set<String> { Set(sortedEntityIDs) }
    /// Domains the template iterates (`states.light`), sorted.
    public let domains: [String]
    /// Whether it reads every entity (`states | …`, `expand(…)`).
    public let readsEveryEntity: Bool
    /// Whether it reads the time (`now()`, `relative_time`, `time_until`…): rendered again each minute, as Home
    /// Assistant renders such templates.
    public let readsTime: Bool
    /// Everything it reads, for the subscription.
    public var reads: EntitySelection {
        EntitySelection(entityIDs: sortedEntityIDs, domains: Set(domains), everything: readsEveryEntity)
    }

    /// Home Assistant strips the template's text before compiling it and the rendered text after: so does this.
    /// `variables`: names the template may read besides its own (an automation's variables, `trigger`), given their
    /// values at `evaluate(in:variables:)`.
    public init(_ source: String, variables: Set<String> = []) throws(CompileError) {
        let leading = source.prefix { $0.isWhitespace }.count
        var builder = TemplateBuilder(source: String(source.dropFirst(leading).reversed().drop { $0.isWhitespace }.reversed()),
                                      variables: variables)
        self.source = source
        do {
            nodes = try builder.build()
            renderedByHomeAssistant = nil
        } catch {
            guard let reason = error.homeAssistantOnly else {
                throw CompileError(offset: error.offset + leading, message: error.message, unknownName: error.unknownName)
            }
            // Home Assistant renders it and pushes each new result; it reads what Home Assistant tracks for it.
            nodes = []
            renderedByHomeAssistant = reason
            builder = TemplateBuilder(source: "")
        }
        sortedEntityIDs = builder.reads.entityIDs.sorted()
        domains = builder.reads.domains.sorted()
        readsEveryEntity = builder.reads.everything
        readsTime = builder.reads.time
    }

    /// As Home Assistant compiles it: a name nothing defines is not an error but undefined when it runs (printed as
    /// nothing); those names are returned. For one-off rendering (`livebridge template`), not rules, where an unknown
    /// name is a mistake `check` points at.
    public static func leniently(_ source: String) throws(CompileError) -> (template: Template, undefined: [String]) {
        var names: [String] = []
        while true {
            do throws(CompileError) {
                return (try Template(source, variables: Set(names)), names)
            } catch {
                guard let name = error.unknownName, !names.contains(name), names.count < 64 else { throw error }
                names.append(name)
            }
        }
    }

    /// A condition read without walking the template: `{{ has_value('id') }}` or `{{ is_state('id', 'on') }}`, the
    /// commonest `active_when` by far. Tested where it is kept (the engine's table of conditions), it does not load
    /// the template's nodes, whose cold loads were most of a condition's cost in the flood (perf).
    public enum QuickTest: Sendable, Equatable {
        case hasValue(String)
        case isState(String, String)

        /// The value the template gives, as its truth (`TemplateEvaluator` gives the same for these expressions).
        public func holds(in context: EvaluationContext) -> Bool {
            switch self {
            case .hasValue(let id): TemplateEvaluator.hasValue(context.state(id))
            case .isState(let id, let value): TemplateEvaluator.isState(context.state(id), value)
            }
        }
    }

    /// This template's quick form, when it is one of those.
    public var quickTest: QuickTest? {
        guard renderedByHomeAssistant == nil, nodes.count == 1, case .expression(let expression) = nodes[0] else { return nil }
        switch expression {
        case .hasValue(let id): return .hasValue(id)
        case .isState(let id, let value): return .isState(id, value)
        default: return nil
        }
    }

    /// The literal text outside expressions and statements, as written.
    public var fixedText: [String] { nodes.compactMap { if case .text(let t) = $0 { t } else { nil } } }

    /// True when the template has no expressions: its value is fixed.
    public var isConstant: Bool { renderedByHomeAssistant == nil && nodes.allSatisfy { if case .text = $0 { true } else { false } } }

    public func evaluate(in context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        try evaluate(in: context, variables: [:])
    }

    /// With values for the names given at compile time.
    public func evaluate(in context: EvaluationContext, variables: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        if let reason = renderedByHomeAssistant {
            guard let rendered = context.renderedByHomeAssistant[source] else {
                throw EvaluationError("rendered by Home Assistant (\(reason)); no result from it yet")
            }
            return try rendered.get()
        }
        return try RenderBudget.render { () throws(EvaluationError) -> TemplateValue in
            let value = try render(in: context, variables: variables)
            // A template that is one expression gives its value whole: bounded as the text of any other is.
            try EvaluationLimits.checkPrintable(value, "the template's value")
            return value
        }
    }

    private func render(in context: EvaluationContext, variables: [String: TemplateValue]) throws(EvaluationError) -> TemplateValue {
        func scope() -> TemplateScope {
            let scope = TemplateScope(parent: nil)
            for (name, value) in variables { scope.set(name, value) }
            return scope
        }
        if nodes.count == 1, case .expression(let expression) = nodes[0] {
            // One expression: no scope made unless there are variables to hold.
            let value = try TemplateEvaluator(context: context, scope: variables.isEmpty ? nil : scope()).evaluate(expression)
            if case .string(let text) = value, text.first?.isWhitespace == true || text.last?.isWhitespace == true {
                return .string(text.trimmingWhitespace())
            }
            return value
        }
        var out = ""
        try TemplateRenderer(context: context).render(nodes, into: &out, scope: scope())
        return .string(out.trimmingWhitespace())
    }
}

/// One piece of a compiled template.
indirect enum TemplateNode: Sendable {
    case text(String)
    case expression(Expression)
    /// `{% if %}…{% elif %}…{% else %}…{% endif %}`: the first branch whose condition holds; `otherwise` if none.
    case conditional(branches: [(condition: Expression, body: [TemplateNode])], otherwise: [TemplateNode])
    /// `{% for a, b in items if condition %}…{% else %}…{% endfor %}`, with `loop.index` and friends (counted over the
    /// items the condition keeps).
    case loop(names: [String], items: Expression, filter: Expression?, body: [TemplateNode], otherwise: [TemplateNode])
    /// `{% set name = value %}`, or `{% set ns.attribute = value %}` on a namespace.
    case assignment(name: String, attribute: String?, value: Expression)
    /// `{% set name %}…{% endset %}`: the block's text.
    case capture(name: String, body: [TemplateNode])
    /// `{% set a, b = pair %}`: the value unpacked into the names.
    case unpacking(names: [String], value: Expression)
    /// `{% break %}`, `{% continue %}` (Home Assistant enables Jinja's loop controls).
    case loopBreak
    case loopContinue
}

/// `{% macro name(a, b=1) %}…{% endmacro %}`: text made from its arguments, called as `name(…)` after it is defined
/// (so it cannot call itself, and calls stay bounded).
final class Macro: Sendable {
    let name: String
    let parameters: [String]
    /// Each parameter's default, nil when it has none.
    let defaults: [Expression?]
    let body: [TemplateNode]

    init(name: String, parameters: [String], defaults: [Expression?], body: [TemplateNode]) {
        self.name = name
        self.parameters = parameters
        self.defaults = defaults
        self.body = body
    }
}
