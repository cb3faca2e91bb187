import HomeAssistant
import Platform

/// Parses the Jinja expression subset Home Assistant users write into an `Expression`.
///
/// Precedence, loosest first: `x if c else y`, `or`, `and`, `not`, comparisons and `in`, `~`, `+ -`, `* / // %`,
/// unary `- +`, `**`, then calls, filters (`|`), attributes and subscripts.
struct TemplateParser {
    struct SyntaxError: Error, Equatable {
        /// Offset in the expression text, in characters.
        let offset: Int
        let message: String
        /// Set when the expression is Home Assistant's but not the local engine's (`area_name(…)`): why.
        var homeAssistantOnly: String? = nil
        /// Set when the error is a name nothing defines (a typo, or a variable the caller did not declare).
        var unknownName: String? = nil
    }

    /// The error for a name only Home Assistant can evaluate, or nil.
    private func homeAssistantOnly(_ name: String, at offset: Int) -> SyntaxError? {
        HomeAssistantOnly.reason(for: name).map { SyntaxError(offset: offset, message: $0, homeAssistantOnly: $0) }
    }

    /// `name(…)` where `name` is no function, macro or Home Assistant-only name.
    private func unknownFunction(_ name: String, at offset: Int) -> SyntaxError {
        let callable = Function.allCases.map(\.rawValue) + Array(macros.keys) + ["apply"]
        let suggestion = Suggestion.closest(to: name, in: callable + HomeAssistantOnly.registryNames + HomeAssistantOnly.otherNames.keys)
            .map { "did you mean \($0)? " } ?? ""
        return SyntaxError(offset: offset, message: "unknown function \"\(name)\"; \(suggestion)templates can call "
            + callable.joined(separator: ", "))
    }

    /// How deep an expression may nest: brackets, calls and signs inside one another, and chains such as
    /// `a + b + c…` (each operator a level). Evaluation recurses once per level, so a bound here is what keeps a
    /// hostile rules file (a thousand brackets, a thousand `+ 1`) from overflowing the stack at load or when a
    /// state changes. Jinja's own bound is Python's recursion limit, which templates of this size also hit.
    static let maximumDepth = 100

    typealias Token = TemplateLexer.Token
    private var tokens: [(token: Token, offset: Int)] = []
    private var index = 0
    private var nesting = 0
    /// Names the template's statements made (`set`, `for`), which an expression may read.
    private var variables: Set<String> = []
    /// Macros defined so far, by name.
    private var macros: [String: Macro] = [:]
    /// Entity ids read by the expression, found while parsing.
    private(set) var entityIDs: Set<String> = []
    /// Domains it iterates (`states.light`).
    private(set) var domains: Set<String> = []
    /// Whether it reads every entity (`states`, `expand`).
    private(set) var readsEveryEntity = false
    /// Whether it reads the time (`now()`, `relative_time`…): Home Assistant renders such templates again each minute.
    private(set) var readsTime = false

    /// What a template reads, found at load: what the connection subscribes to.
    struct Reads {
        var entityIDs: Set<String> = []
        var domains: Set<String> = []
        var everything = false
        var time = false

        mutating func formUnion(_ other: Reads) {
            entityIDs.formUnion(other.entityIDs)
            domains.formUnion(other.domains)
            everything = everything || other.everything
            time = time || other.time
        }
    }

    static func parse(_ text: String, variables: Set<String> = [], macros: [String: Macro] = [:], tuple: Bool = false) throws(SyntaxError) -> (Expression, Reads) {
        var parser = TemplateParser()
        parser.variables = variables
        parser.macros = macros
        parser.tokens = try TemplateLexer.tokenize(text)
        var expression = try parser.conditional()
        if tuple, parser.accept(",") {
            // A bare tuple, `a, b` (a trailing comma allowed), held as a list.
            var items = [expression]
            while parser.current != .end {
                items.append(try parser.conditional())
                guard parser.accept(",") else { break }
            }
            expression = .list(items)
        }
        guard parser.current == .end else { throw parser.error("unexpected \(parser.describe(parser.current))") }
        let depth = expression.depth
        guard depth <= maximumDepth else {
            throw SyntaxError(offset: 0, message: "expression is \(depth) levels deep; the limit is \(maximumDepth) (a chain such as a + b + c counts a level per operator)")
        }
        return (expression, Reads(entityIDs: parser.entityIDs, domains: parser.domains, everything: parser.readsEveryEntity, time: parser.readsTime))
    }

    // MARK: Grammar

    private var current: Token { tokens[index].token }
    private var offset: Int { tokens[index].offset }

    private func error(_ message: String) -> SyntaxError { SyntaxError(offset: offset, message: message) }

    private func describe(_ token: Token) -> String {
        switch token {
        case .number(let v): return "number \(v.text)"
        case .bigInteger(let digits): return "number \(digits)"
        case .string(let s): return "string '\(s)'"
        case .name(let n): return "\"\(n)\""
        case .symbol(let s): return "\"\(s)\""
        case .end: return "end of expression"
        }
    }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private mutating func accept(_ symbol: String) -> Bool {
        if current == .symbol(symbol) { advance(); return true }
        return false
    }

    private mutating func acceptKeyword(_ word: String) -> Bool {
        if current == .name(word) { advance(); return true }
        return false
    }

    private mutating func expect(_ symbol: String) throws(SyntaxError) {
        guard accept(symbol) else { throw error("expected \"\(symbol)\" but found \(describe(current))") }
    }

    /// Counts one level of nesting for the parse of `body`: the parser recurses per level, so it stops before the
    /// stack does.
    private mutating func nested<T>(_ body: (inout TemplateParser) throws(SyntaxError) -> T) throws(SyntaxError) -> T {
        nesting += 1
        defer { nesting -= 1 }
        guard nesting <= Self.maximumDepth else {
            throw error("expression nests deeper than \(Self.maximumDepth) levels")
        }
        return try body(&self)
    }

    /// Counts one more operator in a chain (`a + b + c`, `x | f | g`, `a.b.c`): each is a level of the tree, built
    /// without recursion, so chains are bounded here rather than by the stack.
    private func link(_ links: inout Int) throws(SyntaxError) {
        links += 1
        guard links <= Self.maximumDepth else { throw error("expression chains more than \(Self.maximumDepth) operators") }
    }

    private mutating func conditional() throws(SyntaxError) -> Expression {
        try nested { parser throws(SyntaxError) in try parser.conditionalBody() }
    }

    private mutating func conditionalBody() throws(SyntaxError) -> Expression {
        let value = try or()
        guard acceptKeyword("if") else { return value }
        let condition = try or()
        let otherwise: Expression? = acceptKeyword("else") ? try conditional() : nil
        return .conditional(condition: condition, then: value, otherwise: otherwise)
    }

    private mutating func or() throws(SyntaxError) -> Expression {
        var left = try and()
        var links = 0
        while acceptKeyword("or") { try link(&links); left = .or(left, try and()) }
        return left
    }

    private mutating func and() throws(SyntaxError) -> Expression {
        var left = try not()
        var links = 0
        while acceptKeyword("and") { try link(&links); left = .and(left, try not()) }
        return left
    }

    private mutating func not() throws(SyntaxError) -> Expression {
        if acceptKeyword("not") { return .unary(.not, try nested { parser throws(SyntaxError) in try parser.not() }) }
        return try comparison()
    }

    private mutating func comparison() throws(SyntaxError) -> Expression {
        var left = try concat()
        var links = 0
        // Chained comparisons, as Python's: `0 <= x < 10` is `0 <= x and x < 10`, not `(0 <= x) < 10`.
        var chain: (whole: Expression, last: Expression)?
        func compare(_ op: BinaryOperator, _ right: Expression) {
            let operand = chain?.last ?? left
            let step = Expression.binary(op, operand, right)
            let whole = chain.map { Expression.and($0.whole, step) } ?? step
            chain = (whole, right)
            left = whole
        }
        while true {
            try link(&links)
            if case .symbol(let s) = current, let op = BinaryOperator(rawValue: s),
               [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) {
                advance()
                compare(op, try concat())
            } else if acceptKeyword("in") {
                compare(.contains, try concat())
            } else if current == .name("not"), tokens[index + 1].token == .name("in") {
                advance(); advance()
                compare(.notContains, try concat())
            } else if acceptKeyword("is") {
                chain = nil
                let negated = acceptKeyword("not")
                if case .name(let name) = current, Sequences.entityTests.contains(name) {
                    // `'sensor.x' is is_state('on')`: the same as is_state('sensor.x', 'on').
                    guard case .literal(.string(let id)) = left else {
                        throw error("the test \(name) needs the entity id as a quoted literal before is, e.g. 'sensor.washer' is \(name)(…)")
                    }
                    advance()
                    entityIDs.insert(id.lowercased())
                    let (arguments, keywords) = accept("(") ? try argumentList() : ([], [])
                    let call = Self.fastForm(.call(Function(rawValue: name)!, [left] + arguments, keywords: keywords))
                    left = negated ? .unary(.not, call) : call
                    continue
                }
                if case .name(let name) = current, Sequences.testsOfTheValue.contains(name), TestKind(rawValue: name) == nil {
                    advance()
                    left = .namedTest(left, name, argument: nil, negated: negated)
                    continue
                }
                if case .name(let name) = current, Sequences.testsTakingAValue.contains(name) {
                    advance()
                    // The value in brackets, or the next operand: `is divisibleby(3)`, `is divisibleby 3`.
                    let argument: Expression
                    if accept("(") { argument = try conditional(); try expect(")") } else { argument = try concat() }
                    left = .namedTest(left, name, argument: argument, negated: negated)
                    continue
                }
                if case .name(let name) = current, let remote = homeAssistantOnly(name, at: offset) { throw remote }
                guard case .name(let name) = current, let test = TestKind(rawValue: name) else {
                    throw error("unknown test \(describe(current)); supported: "
                        + (TestKind.allCases.map(\.rawValue) + Sequences.testsTakingAValue.sorted() + Sequences.testsOfTheValue.sorted()
                           + Sequences.entityTests.sorted()).joined(separator: ", "))
                }
                advance()
                left = .test(left, test, negated: negated)
            } else {
                return left
            }
        }
    }

    private mutating func concat() throws(SyntaxError) -> Expression {
        var left = try additive()
        var links = 0
        while accept("~") { try link(&links); left = .binary(.concat, left, try additive()) }
        return left
    }

    private mutating func additive() throws(SyntaxError) -> Expression {
        var left = try multiplicative()
        var links = 0
        while true {
            try link(&links)
            if accept("+") { left = .binary(.add, left, try multiplicative()) }
            else if accept("-") { left = .binary(.subtract, left, try multiplicative()) }
            else { return left }
        }
    }

    private mutating func multiplicative() throws(SyntaxError) -> Expression {
        var left = try power()
        var links = 0
        while true {
            try link(&links)
            if accept("*") { left = .binary(.multiply, left, try power()) }
            else if accept("//") { left = .binary(.floorDivide, left, try power()) }
            else if accept("/") { left = .binary(.divide, left, try power()) }
            else if accept("%") { left = .binary(.modulo, left, try power()) }
            else { return left }
        }
    }

    private mutating func power() throws(SyntaxError) -> Expression {
        var left = try unary()
        var links = 0
        while accept("**") { try link(&links); left = .binary(.power, left, try unary()) }
        return left
    }

    /// As in Jinja, filters apply after a unary sign: `-5 | abs` is 5.
    private mutating func unary(withFilters: Bool = true) throws(SyntaxError) -> Expression {
        var node: Expression
        if accept("-") {
            // -9223372036854775808: the one integer whose magnitude is past Int's positive range.
            if case .bigInteger("9223372036854775808") = current, tokens[index + 1].token != .symbol("**") {
                advance()
                return withFilters ? try filters(try postfix(after: .literal(.int(.min)))) : try postfix(after: .literal(.int(.min)))
            }
            node = .unary(.negate, try nested { parser throws(SyntaxError) in try parser.unary(withFilters: false) })
        } else if accept("+") {
            node = .unary(.plus, try nested { parser throws(SyntaxError) in try parser.unary(withFilters: false) })
        } else {
            node = try postfix()
        }
        return withFilters ? try filters(node) : node
    }

    private mutating func filters(_ input: Expression) throws(SyntaxError) -> Expression {
        var value = input
        var links = 0
        while accept("|") {
            try link(&links)
            guard case .name(let name) = current else { throw error("expected a filter name after \"|\"") }
            // Home Assistant's states, state_attr, has_value and expand are filters too (`'sensor.x' | states`): the
            // call, the value first. is_state and is_state_attr are tests only, in 2026.
            if Filter(rawValue: name) == nil, let function = Function(rawValue: name), [.states, .stateAttr, .hasValue, .expand].contains(function) {
                advance()
                var arguments: [Expression] = []
                var keywords: [(String, Expression)] = []
                if accept("(") { (arguments, keywords) = try argumentList() }
                if function == .expand { readsEveryEntity = true }
                if function.readsEntity {
                    if case .literal(.string(let id)) = value { entityIDs.insert(id.lowercased()) } else { readsEveryEntity = true }
                }
                value = try postfix(after: Self.fastForm(.call(function, [value] + arguments, keywords: keywords)))
                continue
            }
            if name == "apply" {
                // value | apply(fn, …): apply(value, fn, …).
                advance()
                try expect("(")
                value = try postfix(after: try applied(try callableReference(), to: value))
                continue
            }
            guard let filter = Filter(rawValue: name) else {
                if let remote = homeAssistantOnly(name, at: offset) { throw remote }
                let suggestion = Suggestion.closest(to: name, in: Filter.allCases.map(\.rawValue)).map { "did you mean \($0)? " } ?? ""
                throw error("unknown filter \"\(name)\"; \(suggestion)supported: " + Filter.allCases.map(\.rawValue).joined(separator: ", "))
            }
            if [.relativeTime, .timeSince, .timeUntil, .todayAt].contains(filter) { readsTime = true }
            if filter == .closest { noteLocationReads(.closest, []) }
            advance()
            var arguments: [Expression] = []
            var keywords: [(String, Expression)] = []
            if filter == .map, current == .symbol("("), tokens[index + 1].token == .string("apply"), tokens[index + 2].token == .symbol(",") {
                // map('apply', fn, …): fn(item, …) for each item.
                advance(); advance(); advance()
                value = try postfix(after: .each(value, body: try applied(try callableReference(), to: .variable(Expression.eachItem))))
                continue
            }
            if accept("(") { (arguments, keywords) = try argumentList() }
            // select('is_hidden_entity'), map('area_name'): a test or filter only Home Assistant has, by its name.
            let namedPosition = [.selectattr, .rejectattr].contains(filter) ? 1 : 0
            if [.map, .select, .reject, .selectattr, .rejectattr].contains(filter), arguments.count > namedPosition,
               case .literal(.string(let named)) = arguments[namedPosition], let remote = homeAssistantOnly(named, at: offset) {
                throw remote
            }
            // map('states'), select('is_state', 'on'): entities named by the items, known only when it runs.
            if [.map, .select, .reject, .selectattr, .rejectattr].contains(filter),
               arguments.contains(where: { if case .literal(.string(let n)) = $0 { Function(rawValue: n)?.readsEntity == true } else { false } }) {
                readsEveryEntity = true
            }
            value = try postfix(after: Self.fastForm(.filter(filter, value, arguments, keywords: keywords)))
        }
        return value
    }

    private mutating func postfix(after base: Expression? = nil) throws(SyntaxError) -> Expression {
        var value: Expression
        if let base { value = base } else { value = try primary() }
        var links = 0
        while true {
            try link(&links)
            if accept(".") {
                // `items.0`: Jinja's attribute lookup falls back to the item.
                if case .number(.int(let i)) = current {
                    advance()
                    value = .item(value, .literal(.int(i)))
                    continue
                }
                guard case .name(let name) = current else { throw error("expected a name after \".\"") }
                let nameOffset = offset
                if name == "state_with_unit" {
                    let reason = "state_with_unit rounds with the display precision in Home Assistant's entity registry"
                    throw SyntaxError(offset: nameOffset, message: reason, homeAssistantOnly: reason)
                }
                advance()
                if accept("(") {
                    guard let method = Method(rawValue: name) else {
                        throw SyntaxError(offset: nameOffset, message: "unknown method \"\(name)\"; supported: " + Method.allCases.map(\.rawValue).joined(separator: ", "))
                    }
                    let (arguments, keywords) = try argumentList()
                    value = .method(value, method, arguments, keywords: keywords)
                } else {
                    value = .attribute(value, name)
                }
            } else if accept("[") {
                // An index, or a slice: [start:stop:step], each part optional.
                let start: Expression? = current == .symbol(":") ? nil : try conditional()
                if accept(":") {
                    let stop: Expression? = current == .symbol(":") || current == .symbol("]") ? nil : try conditional()
                    var step: Expression?
                    if accept(":"), current != .symbol("]") { step = try conditional() }
                    try expect("]")
                    value = .slice(value, start: start, stop: stop, step: step)
                } else {
                    try expect("]")
                    value = .item(value, start!)
                }
            } else {
                return value
            }
        }
    }

    /// What `distance` and `closest` read: home (zone.home when Home Assistant's configuration is not at hand), the
    /// entities named by literal ids; `closest` expands groups, whose members change, and any computed id could be
    /// any entity: every entity is kept then.
    private mutating func noteLocationReads(_ function: Function, _ arguments: [Expression]) {
        entityIDs.insert("zone.home")
        if function == .closest { readsEveryEntity = true; return }
        for argument in arguments {
            switch argument {
            case .literal(.string(let id)): if EntityID.isValid(id.lowercased()) { entityIDs.insert(id.lowercased()) }
            case .literal, .entity: break
            default: readsEveryEntity = true
            }
        }
    }

    /// Jinja's macro call: a keyword must name a parameter the positional arguments left (no `**kwargs` here).
    static func checkKeywords(_ keywords: [(String, Expression)], of macro: Macro, named name: String, after positional: Int,
                              at offset: Int) throws(SyntaxError) {
        for (keyword, _) in keywords where !macro.parameters.dropFirst(positional).contains(keyword) {
            throw SyntaxError(offset: offset, message: "macro \(name.isEmpty ? "" : "'\(name)' ")takes no keyword argument '\(keyword)'")
        }
    }

    /// A macro or function named as a value (`apply(x, add_foo)`, `map('apply', int)`).
    private mutating func callableReference() throws(SyntaxError) -> CallableReference {
        guard case .name(let name) = current, !variables.contains(name) else {
            throw error("expected the name of a macro or function to apply, found \(describe(current))")
        }
        if let macro = macros[name] {
            advance()
            return .macro(macro)
        }
        guard let function = Function(rawValue: name) else {
            if let remote = homeAssistantOnly(name, at: offset) { throw remote }
            throw error("\(name) is not a macro of this template or a function LiveBridge can apply")
        }
        advance()
        return .function(function)
    }

    /// The call `apply` makes, after the callable: `fn(value, rest of the arguments…)` up to the closing ")".
    private mutating func applied(_ callable: CallableReference, to value: Expression) throws(SyntaxError) -> Expression {
        let start = offset
        var (arguments, keywords): ([Expression], [(String, Expression)]) = ([], [])
        if !accept(")") {
            try expect(",")
            (arguments, keywords) = try argumentList()
        }
        switch callable {
        case .macro(let macro):
            guard arguments.count + 1 <= macro.parameters.count else {
                throw SyntaxError(offset: start, message: "macro takes \(macro.parameters.count) arguments, got \(arguments.count + 1)")
            }
            try Self.checkKeywords(keywords, of: macro, named: "", after: arguments.count + 1, at: start)
            return .macroCall(macro, [value] + arguments, keywords: keywords)
        case .function(let function):
            // The entity or clock it reads is known only when it runs.
            if function.readsEntity || [.expand, .distance, .closest].contains(function) { readsEveryEntity = true }
            if [.now, .utcnow, .relativeTime, .timeSince, .timeUntil, .todayAt].contains(function) { readsTime = true }
            return Self.fastForm(.call(function, [value] + arguments, keywords: keywords))
        }
    }

    private mutating func argumentList() throws(SyntaxError) -> ([Expression], [(String, Expression)]) {
        var arguments: [Expression] = []
        var keywords: [(String, Expression)] = []
        if accept(")") { return (arguments, keywords) }
        repeat {
            if current == .symbol(")") { break }  // a trailing comma
            if case .name(let name) = current, tokens[index + 1].token == .symbol("=") {
                advance(); advance()
                keywords.append((name, try conditional()))
            } else {
                guard keywords.isEmpty else { throw error("a positional argument cannot follow a keyword argument") }
                arguments.append(try conditional())
            }
        } while accept(",")
        try expect(")")
        return (arguments, keywords)
    }

    private mutating func primary() throws(SyntaxError) -> Expression {
        let token = current
        let start = offset
        switch token {
        case .number(let value):
            advance()
            return .literal(value)
        case .bigInteger(let digits):
            // Beyond 64 bits: held as a float (LiveBridge's integers are 64-bit; arithmetic on it is a float's).
            advance()
            return .literal(.double(Double(digits) ?? .infinity))
        case .string(var value):
            advance()
            // Adjacent string literals join, as in Python.
            while case .string(let more) = current { value += more; advance() }
            return .literal(.string(value))
        case .symbol("("):
            advance()
            if accept(")") { return .list([]) }
            let inner = try conditional()
            // (a, b): a tuple, held as a list.
            guard accept(",") else {
                try expect(")")
                return inner
            }
            var items = [inner]
            while current != .symbol(")") {
                items.append(try conditional())
                guard accept(",") else { break }
            }
            try expect(")")
            return .list(items)
        case .symbol("{"):
            advance()
            var pairs: [(key: Expression, value: Expression)] = []
            if !accept("}") {
                repeat {
                    if current == .symbol("}") { break }  // a trailing comma
                    let key = try conditional()
                    try expect(":")
                    pairs.append((key, try conditional()))
                } while accept(",")
                try expect("}")
            }
            return .dictionary(pairs)
        case .symbol("["):
            advance()
            var items: [Expression] = []
            if !accept("]") {
                repeat {
                    if current == .symbol("]") { break }  // a trailing comma
                    items.append(try conditional())
                } while accept(",")
                try expect("]")
            }
            return .list(items)
        case .name(let name):
            advance()
            switch name {
            case "true", "True": return .literal(.bool(true))
            case "false", "False": return .literal(.bool(false))
            case "none", "None": return .literal(.none)
            // Home Assistant's constants.
            case "pi" where !variables.contains(name): return .literal(.double(Double.pi))
            case "e" where !variables.contains(name): return .literal(.double(2.718281828459045))
            case "tau" where !variables.contains(name): return .literal(.double(2 * Double.pi))
            case "states" where current == .symbol("."):
                return try entityObject(start: start)
            case "states" where current == .symbol("[") && !variables.contains(name):
                // states['sensor.x'] is the entity, states['sensor'] the domain, as states.sensor.x and states.sensor.
                if case .string(let key) = tokens[index + 1].token, tokens[index + 2].token == .symbol("]") {
                    advance(); advance(); advance()
                    let parts = key.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    if parts.count == 2 {
                        entityIDs.insert(key.lowercased())
                        return .entity(key)
                    }
                    domains.insert(key)
                    return .domainStates(key)
                }
                readsEveryEntity = true
                return .allStates
            case "states" where current != .symbol("(") && !variables.contains(name):
                readsEveryEntity = true
                return .allStates
            default: break
            }
            if variables.contains(name) {
                // A template's values are never functions: a call of a name that is not one is a mistake (a function
                // Home Assistant may have and LiveBridge does not, or a misspelling), said as such.
                if current == .symbol("("), macros[name] == nil, Function(rawValue: name) == nil, name != "apply" {
                    throw unknownFunction(name, at: start)
                }
                return .variable(name)
            }
            if name == "apply", macros[name] == nil, accept("(") {
                // apply(value, fn, *args, **kwargs): fn(value, *args, **kwargs), fn a macro or a function.
                let value = try conditional()
                try expect(",")
                return try applied(try callableReference(), to: value)
            }
            if let macro = macros[name], accept("(") {
                let (arguments, keywords) = try argumentList()
                guard arguments.count <= macro.parameters.count else {
                    throw SyntaxError(offset: start, message: "macro \(name) takes \(macro.parameters.count) arguments, got \(arguments.count)")
                }
                try Self.checkKeywords(keywords, of: macro, named: name, after: arguments.count, at: start)
                return .macroCall(macro, arguments, keywords: keywords)
            }
            guard let function = Function(rawValue: name) else {
                if let remote = homeAssistantOnly(name, at: start) { throw remote }
                if current == .symbol("(") { throw unknownFunction(name, at: start) }
                let known = Function.allCases.map(\.rawValue) + Array(variables) + ["states", "pi", "e", "tau", "true", "false", "none"]
                    + HomeAssistantOnly.registryNames + HomeAssistantOnly.otherNames.keys
                let suggestion = Suggestion.closest(to: name, in: known).map { "did you mean \($0)? " } ?? ""
                throw SyntaxError(offset: start, message: "unknown name \"\(name)\"; \(suggestion)templates read entities with states('…'), "
                    + "state_attr('…', '…') or states.domain.object_id, and can call "
                    + Function.allCases.map(\.rawValue).joined(separator: ", "), unknownName: name)
            }
            guard accept("(") else { throw SyntaxError(offset: start, message: "\(name) is a function: call it as \(name)(…)") }
            let (arguments, keywords) = try argumentList()
            // rounded=True formats with the display precision in Home Assistant's entity registry: Home Assistant renders it.
            if function == .states, let rounded = keywords.first(where: { $0.0 == "rounded" })?.1 {
                if case .literal(let value) = rounded, !value.isTruthy {} else {
                    let reason = "states(…, rounded=True) uses the display precision in Home Assistant's entity registry"
                    throw SyntaxError(offset: start, message: reason, homeAssistantOnly: reason)
                }
            }
            // expand() reads groups' members, which can change: every entity is kept.
            if function == .expand { readsEveryEntity = true }
            if function == .distance || function == .closest { noteLocationReads(function, arguments) }
            if [.now, .utcnow, .relativeTime, .timeSince, .timeUntil, .todayAt].contains(function) { readsTime = true }
            if function.readsEntity {
                guard let first = arguments.first else {
                    throw SyntaxError(offset: start, message: "\(name)() needs an entity id, e.g. \(name)('sensor.washer')")
                }
                // A literal id is subscribed by itself; one computed when the template runs (`states(light.entity_id)`
                // in a loop) could be any entity, so every entity is kept.
                if case .literal(.string(let id)) = first { entityIDs.insert(id.lowercased()) } else { readsEveryEntity = true }
            }
            return Self.fastForm(.call(function, arguments, keywords: keywords))
        default:
            throw error("unexpected \(describe(token))")
        }
    }

    /// The same expression in a form that evaluates without building argument lists.
    static func fastForm(_ expression: Expression) -> Expression {
        switch expression {
        case .call(.states, let args, let keywords) where keywords.isEmpty && args.count == 1:
            if case .literal(.string(let id)) = args[0] { return .stateOf(id) }
        case .call(.stateAttr, let args, let keywords) where keywords.isEmpty && args.count == 2:
            if case .literal(.string(let id)) = args[0], case .literal(.string(let name)) = args[1] { return .attributeOf(id, name) }
        case .call(.isState, let args, let keywords) where keywords.isEmpty && args.count == 2:
            if case .literal(.string(let id)) = args[0], case .literal(.string(let value)) = args[1] { return .isState(id, value) }
        case .call(.hasValue, let args, let keywords) where keywords.isEmpty && args.count == 1:
            if case .literal(.string(let id)) = args[0] { return .hasValue(id) }
        case .filter(let filter, let input, let args, let keywords) where (filter == .float || filter == .int) && keywords.isEmpty && args.count <= 1:
            if args.isEmpty { return .number(input, integer: filter == .int, fallback: nil) }
            if case .literal(let fallback) = args[0] { return .number(input, integer: filter == .int, fallback: fallback) }
        default:
            break
        }
        return expression
    }

    /// `states.domain.object_id`, or `states.domain` alone.
    private mutating func entityObject(start: Int) throws(SyntaxError) -> Expression {
        try expect(".")
        guard case .name(let domain) = current else { throw error("expected a domain after \"states.\"") }
        advance()
        guard current == .symbol("."), case .name = tokens[index + 1].token else {
            domains.insert(domain)
            return .domainStates(domain)
        }
        try expect(".")
        guard case .name(let object) = current else { throw error("expected an object id after \"states.\(domain).\"") }
        advance()
        let id = domain + "." + object
        entityIDs.insert(id.lowercased())
        return .entity(id)
    }
}
