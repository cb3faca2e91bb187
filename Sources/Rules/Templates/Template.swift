/// A field's text, compiled once: literal text and `{{ expression }}` parts.
///
/// A template that is exactly one expression yields that expression's value with its type (a float stays a float);
/// anything else is text. `{# comments #}` are dropped; statements (`{% … %}`) are refused at load.
public struct Template: Sendable {
    enum Part: Sendable {
        case text(String)
        case expression(Expression)
    }

    public struct CompileError: Error, Equatable, Sendable, CustomStringConvertible {
        /// Character offset in the template text.
        public let offset: Int
        public let message: String
        public var description: String { message }
    }

    let parts: [Part]
    /// The entities this template reads, found at load, sorted. An array rather than a set: one template may read
    /// thousands, and they stay for the life of the rules.
    public let sortedEntityIDs: [String]
    /// The same, as a set.
    public var entityIDs: Set<String> { Set(sortedEntityIDs) }

    public init(_ source: String) throws(CompileError) {
        var parts: [Part] = []
        var entities: Set<String> = []
        let chars = Array(source)
        var text = ""
        var i = 0
        func at(_ j: Int, _ s: String) -> Bool {
            let needle = Array(s)
            return j + needle.count <= chars.count && Array(chars[j..<(j + needle.count)]) == needle
        }
        while i < chars.count {
            if at(i, "{{") {
                guard let close = (i + 2..<chars.count).first(where: { at($0, "}}") }) else {
                    throw CompileError(offset: i, message: "\"{{\" is not closed with \"}}\"")
                }
                let body = String(chars[(i + 2)..<close])
                do {
                    let (expression, ids) = try TemplateParser.parse(body)
                    if !text.isEmpty { parts.append(.text(text)); text = "" }
                    parts.append(.expression(expression))
                    entities.formUnion(ids)
                } catch {
                    throw CompileError(offset: i + 2 + error.offset, message: error.message)
                }
                i = close + 2
            } else if at(i, "{%") {
                throw CompileError(offset: i, message: "statements ({% … %}) are not supported; use an inline if: {{ a if condition else b }}")
            } else if at(i, "{#") {
                guard let close = (i + 2..<chars.count).first(where: { at($0, "#}") }) else {
                    throw CompileError(offset: i, message: "\"{#\" is not closed with \"#}\"")
                }
                i = close + 2
            } else {
                text.append(chars[i])
                i += 1
            }
        }
        if !text.isEmpty { parts.append(.text(text)) }
        self.parts = parts
        self.sortedEntityIDs = entities.sorted()
    }

    /// The literal text between the expressions, as written.
    public var fixedText: [String] { parts.compactMap { if case .text(let t) = $0 { t } else { nil } } }

    /// True when the template has no expressions: its value is fixed.
    public var isConstant: Bool { parts.allSatisfy { if case .text = $0 { true } else { false } } }

    public func evaluate(in context: EvaluationContext) throws(EvaluationError) -> TemplateValue {
        let evaluator = TemplateEvaluator(context: context)
        if parts.count == 1, case .expression(let expression) = parts[0] {
            return try evaluator.evaluate(expression)
        }
        var out = ""
        for part in parts {
            switch part {
            case .text(let t): out += t
            case .expression(let e): out += try evaluator.evaluate(e).text
            }
        }
        return .string(out)
    }
}
