import Platform

/// Compiles a template's source into nodes: splits it into text, `{{ … }}`, `{% … %}` and `{# … #}` as Jinja does
/// (whitespace control, `{% raw %}`, one trailing newline dropped), parses each expression, and nests the statements.
struct TemplateBuilder {
    let chars: [Character]
    private(set) var reads = TemplateParser.Reads()
    /// Names `set` and `for` have introduced so far: expressions may read them.
    private var variables: Set<String> = []
    /// Macros defined so far.
    private var macros: [String: Macro] = [:]
    /// Blocks open now: they nest by recursion, here and when rendering, so they are bounded as expressions are.
    private var depth = 0
    /// How many `for` loops enclose the statement being read: `break` and `continue` need one.
    private var loops = 0

    /// `variables`: names given from outside (a blueprint's variables, `trigger`), readable everywhere.
    init(source: String, variables: Set<String> = []) {
        self.variables = variables
        var chars = Array(source)
        // Jinja's keep_trailing_newline is off (Home Assistant leaves it so): one final newline is not output.
        if chars.last == "\n" { chars.removeLast() }
        self.chars = chars
    }

    typealias CompileError = Template.CompileError

    /// A piece of the source, with where its content starts.
    private enum Segment {
        case text(String)
        case expression(String, offset: Int)
        case statement(String, offset: Int)
    }

    mutating func build() throws(CompileError) -> [TemplateNode] {
        var segments = try split()[...]
        let nodes = try block(&segments, until: [])
        if let (word, offset) = nodes.end {
            throw CompileError(offset: offset, message: "{% \(word) %} without its opening statement")
        }
        return nodes.body
    }

    // MARK: Splitting

    private func at(_ i: Int, _ s: String) -> Bool {
        var j = i
        for c in s {
            guard j < chars.count, chars[j] == c else { return false }
            j += 1
        }
        return true
    }

    private func find(_ s: String, from start: Int) -> Int? {
        var i = start
        while i < chars.count {
            if at(i, s) { return i }
            i += 1
        }
        return nil
    }

    /// Where an expression or statement ends: its closing `}}` or `%}` outside strings and brackets, as Jinja's
    /// lexer finds it (`{{ {'a': {'b': 1}} }}` closes at the last braces).
    private func findClose(_ close: String, from start: Int) -> Int? {
        var i = start
        var depth = 0
        var quote: Character?
        while i < chars.count {
            let c = chars[i]
            if let q = quote {
                if c == "\\" { i += 2; continue }
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if depth == 0, at(i, close) {
                return i
            } else if c == "(" || c == "[" || c == "{" {
                depth += 1
            } else if c == ")" || c == "]" || c == "}" {
                depth = max(0, depth - 1)
            }
            i += 1
        }
        return nil
    }

    private func split() throws(CompileError) -> [Segment] {
        var segments: [Segment] = []
        var text = ""
        var stripNextText = false
        var i = 0
        func flushText(stripTrailing: Bool) {
            var t = text
            if stripTrailing { while let last = t.last, last.isWhitespace { t.removeLast() } }
            if !t.isEmpty { segments.append(.text(t)) }
            text = ""
        }
        while i < chars.count {
            let opener: (open: String, close: String)? = at(i, "{{") ? ("{{", "}}") : at(i, "{%") ? ("{%", "%}") : at(i, "{#") ? ("{#", "#}") : nil
            guard let (open, close) = opener else {
                if stripNextText, chars[i].isWhitespace { i += 1; continue }
                stripNextText = false
                text.append(chars[i])
                i += 1
                continue
            }
            stripNextText = false
            var contentStart = i + 2
            let stripBefore = contentStart < chars.count && chars[contentStart] == "-"
            if stripBefore || (contentStart < chars.count && chars[contentStart] == "+") { contentStart += 1 }
            // Unbalanced brackets: the first closer, so the parser can say which bracket is not closed.
            let balanced = open == "{#" ? nil : findClose(close, from: contentStart)
            guard let closeAt = balanced ?? find(close, from: contentStart) else {
                throw CompileError(offset: i, message: "\"\(open)\" is not closed with \"\(close)\"")
            }
            var contentEnd = closeAt
            let stripAfter = contentEnd > contentStart && chars[contentEnd - 1] == "-"
            if stripAfter || (contentEnd > contentStart && chars[contentEnd - 1] == "+") { contentEnd -= 1 }
            flushText(stripTrailing: stripBefore)
            let content = String(chars[contentStart..<contentEnd])
            i = closeAt + 2
            stripNextText = stripAfter
            switch open {
            case "{{": segments.append(.expression(content, offset: contentStart))
            case "{#": break
            default:
                if content.split(separator: " ", omittingEmptySubsequences: true) == ["raw"] {
                    // Everything up to {% endraw %} is text, braces and all.
                    guard let (rawText, after) = raw(from: i) else {
                        throw CompileError(offset: contentStart, message: "{% raw %} is not closed with {% endraw %}")
                    }
                    text += rawText
                    i = after
                } else {
                    segments.append(.statement(content, offset: contentStart))
                }
            }
        }
        flushText(stripTrailing: false)
        return segments
    }

    /// The text of a raw block starting at `start`, and where the source goes on after its `{% endraw %}`.
    private func raw(from start: Int) -> (String, Int)? {
        var i = start
        while let open = find("{%", from: i) {
            guard let close = find("%}", from: open + 2) else { return nil }
            let inner = String(chars[(open + 2)..<close]).trimmingCharacters(in: "-+ \t\n")
            if inner == "endraw" { return (String(chars[start..<open]), close + 2) }
            i = close + 2
        }
        return nil
    }

    // MARK: Nesting

    /// Nodes up to one of the statements in `until` (returned with its offset), or to the end.
    private mutating func block(_ segments: inout ArraySlice<Segment>, until: Set<String>)
        throws(CompileError) -> (body: [TemplateNode], end: (word: String, offset: Int)?, rest: String) {
        var body: [TemplateNode] = []
        while let segment = segments.popFirst() {
            switch segment {
            case .text(let t):
                body.append(.text(t))
            case .expression(let source, let offset):
                body.append(.expression(try expression(source, at: offset)))
            case .statement(let source, let offset):
                let (word, rest, restOffset) = Self.keyword(source, offset: offset)
                if until.contains(word) || ["elif", "else", "endif", "endfor"].contains(word) {
                    guard until.contains(word) else {
                        throw CompileError(offset: offset, message: "{% \(word) %} without its opening statement")
                    }
                    return (body, (word, restOffset), rest)
                }
                body.append(try statement(word, rest, at: restOffset, offset: offset, &segments))
            }
        }
        return (body, nil, "")
    }

    private mutating func statement(_ word: String, _ rest: String, at restOffset: Int, offset: Int,
                                    _ segments: inout ArraySlice<Segment>) throws(CompileError) -> TemplateNode {
        depth += 1
        defer { depth -= 1 }
        guard depth <= TemplateParser.maximumDepth else {
            throw CompileError(offset: offset, message: "statements nest deeper than \(TemplateParser.maximumDepth) levels")
        }
        switch word {
        case "if":
            var branches: [(Expression, [TemplateNode])] = []
            var condition = try expression(rest, at: restOffset)
            while true {
                let (body, end, next) = try block(&segments, until: ["elif", "else", "endif"])
                branches.append((condition, body))
                guard let end else { throw CompileError(offset: offset, message: "{% if %} is not closed with {% endif %}") }
                switch end.word {
                case "elif":
                    condition = try expression(next, at: end.offset)
                case "else":
                    let (otherwise, close, _) = try block(&segments, until: ["endif"])
                    guard close != nil else { throw CompileError(offset: offset, message: "{% if %} is not closed with {% endif %}") }
                    return .conditional(branches: branches, otherwise: otherwise)
                default:
                    return .conditional(branches: branches, otherwise: [])
                }
            }
        case "for":
            guard let inRange = rest.firstRange(ofText: " in ") else {
                throw CompileError(offset: restOffset, message: "write {% for item in items %}")
            }
            let names = rest[..<inRange.lowerBound].split(separator: ",").map { $0.trimmingCharacters(in: " \t\n") }
            guard !names.isEmpty, names.allSatisfy(Self.isName) else {
                throw CompileError(offset: restOffset, message: "{% for %} needs a name, or names separated by commas, before \"in\"")
            }
            let itemsSource = String(rest[inRange.upperBound...])
            // The names are known to a loop filter (`for x in items if x.state == 'on'`): a top-level `if` without
            // `else` is that filter, as in Jinja.
            variables.formUnion(names)
            var items = try expression(itemsSource, at: restOffset + rest.distance(from: rest.startIndex, to: inRange.upperBound))
            var filter: Expression?
            if case .conditional(let condition, let then, nil) = items { items = then; filter = condition }
            variables.insert("loop")
            loops += 1
            let (body, end, _) = try block(&segments, until: ["else", "endfor"])
            loops -= 1
            guard let end else { throw CompileError(offset: offset, message: "{% for %} is not closed with {% endfor %}") }
            var otherwise: [TemplateNode] = []
            if end.word == "else" {
                let (elseBody, close, _) = try block(&segments, until: ["endfor"])
                guard close != nil else { throw CompileError(offset: offset, message: "{% for %} is not closed with {% endfor %}") }
                otherwise = elseBody
            }
            return .loop(names: names, items: items, filter: filter, body: body, otherwise: otherwise)
        case "set" where !rest.contains("="):
            let name = rest.trimmingCharacters(in: " \t\n")
            guard Self.isName(name) else { throw CompileError(offset: restOffset, message: "write {% set name = value %} or {% set name %}…{% endset %}") }
            let (body, end, _) = try block(&segments, until: ["endset"])
            guard end != nil else { throw CompileError(offset: offset, message: "{% set \(name) %} is not closed with {% endset %}") }
            variables.insert(name)
            return .capture(name: name, body: body)
        case "macro":
            let outerLoops = loops
            loops = 0
            defer { loops = outerLoops }
            return try macro(rest, at: restOffset, offset: offset, &segments)
        case "break", "continue":
            guard rest.trimmingCharacters(in: " \t\n").isEmpty else { throw CompileError(offset: restOffset, message: "{% \(word) %} takes nothing") }
            guard loops > 0 else { throw CompileError(offset: offset, message: "{% \(word) %} outside a {% for %} loop") }
            return word == "break" ? .loopBreak : .loopContinue
        case "set" where rest.firstIndex(of: "=").map({ rest[..<$0].contains(",") }) == true:
            // {% set a, b = 1, 2 %}: names unpacked from the value.
            let equals = rest.firstIndex(of: "=")!
            let names = rest[..<equals].split(separator: ",").map { $0.trimmingCharacters(in: " \t\n") }
            guard names.count > 1, names.allSatisfy(Self.isName) else {
                throw CompileError(offset: restOffset, message: "write {% set a, b = value %} with names separated by commas")
            }
            let value = try expression(String(rest[rest.index(after: equals)...]),
                                       at: restOffset + rest.distance(from: rest.startIndex, to: equals) + 1, tuple: true)
            variables.formUnion(names)
            return .unpacking(names: names, value: value)
        case "set":
            guard let equals = rest.firstIndex(of: "=") else {
                throw CompileError(offset: restOffset, message: "write {% set name = value %}")
            }
            let target = rest[..<equals].trimmingCharacters(in: " \t\n")
            let parts = target.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard (1...2).contains(parts.count), parts.allSatisfy(Self.isName) else {
                throw CompileError(offset: restOffset, message: "\"\(target)\" cannot be set: write a name, or namespace.attribute")
            }
            if parts.count == 2, !variables.contains(parts[0]) {
                throw CompileError(offset: restOffset, message: "\(parts[0]) is not set: make it with {% set \(parts[0]) = namespace() %} first")
            }
            let value = try expression(String(rest[rest.index(after: equals)...]),
                                       at: restOffset + rest.distance(from: rest.startIndex, to: equals) + 1, tuple: true)
            if parts.count == 1 { variables.insert(parts[0]) }
            return .assignment(name: parts[0], attribute: parts.count == 2 ? parts[1] : nil, value: value)
        default:
            throw CompileError(offset: offset, message: "unknown statement \"\(word)\"; supported: if, elif, else, for, set, macro, raw, break, continue")
        }
    }

    /// `{% macro name(a, b=default) %}…{% endmacro %}`: compiled with its parameters as names; defined for what follows.
    private mutating func macro(_ rest: String, at restOffset: Int, offset: Int, _ segments: inout ArraySlice<Segment>) throws(CompileError) -> TemplateNode {
        let signature = rest.trimmingCharacters(in: " \t\n")
        guard let open = signature.firstIndex(of: "("), signature.hasSuffix(")") else {
            throw CompileError(offset: restOffset, message: "write {% macro name(arguments) %}")
        }
        let name = String(signature[..<open]).trimmingCharacters(in: " ")
        guard Self.isName(name) else { throw CompileError(offset: restOffset, message: "\"\(name)\" is not a macro name") }
        var parameters: [String] = []
        var defaults: [Expression?] = []
        let list = signature[signature.index(after: open)..<signature.index(before: signature.endIndex)]
        for part in list.split(separator: ",").map(String.init) where !part.trimmingCharacters(in: " ").isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            let parameter = pieces[0].trimmingCharacters(in: " \t\n")
            guard Self.isName(parameter) else { throw CompileError(offset: restOffset, message: "\"\(parameter)\" is not a parameter name") }
            parameters.append(parameter)
            defaults.append(pieces.count == 2 ? try expression(pieces[1], at: restOffset) : nil)
        }
        let outer = variables
        variables.formUnion(parameters)
        let (body, end, _) = try block(&segments, until: ["endmacro"])
        variables = outer
        guard end != nil else { throw CompileError(offset: offset, message: "{% macro \(name) %} is not closed with {% endmacro %}") }
        macros[name] = Macro(name: name, parameters: parameters, defaults: defaults, body: body)
        return .text("")
    }

    /// `tuple`: a bare `a, b` is a tuple (a `set`'s value), as in Jinja.
    private mutating func expression(_ source: String, at offset: Int, tuple: Bool = false) throws(CompileError) -> Expression {
        do {
            let (expression, found) = try TemplateParser.parse(source, variables: variables, macros: macros, tuple: tuple)
            reads.formUnion(found)
            return expression
        } catch {
            throw CompileError(offset: offset + error.offset, message: error.message, homeAssistantOnly: error.homeAssistantOnly,
                               unknownName: error.unknownName)
        }
    }

    /// The statement's first word, the rest of it, and where the rest starts.
    private static func keyword(_ source: String, offset: Int) -> (String, String, Int) {
        let trimmed = source.drop { $0.isWhitespace }
        let word = String(trimmed.prefix { !$0.isWhitespace })
        let rest = trimmed.dropFirst(word.count)
        return (word, String(rest), offset + source.distance(from: source.startIndex, to: rest.startIndex))
    }

    static func isName(_ text: String) -> Bool {
        guard let first = text.first, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }
}

private extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let first = s.first, set.contains(first) { s.removeFirst() }
        while let last = s.last, set.contains(last) { s.removeLast() }
        return String(s)
    }
}
