import CYAML

/// Parses YAML text with libyaml into `YAMLNode`s with line and column, keeping custom tags for the loader.
struct YAMLParser {
    /// At most this many nodes brought in by aliases, counted expanded: libyaml does not bound it, and a 1 KB file
    /// of aliases to aliases ("billion laughs") expands to a billion. A rules file has a few dozen. Nodes written
    /// out are bounded by the file's size instead (`YAMLLoader.maximumFileBytes`): a large file is not an attack.
    static let maximumAliasNodes = 100_000
    /// At most this many lists and mappings inside one another.
    static let maximumDepth = 64

    /// A node still being built: a tag waiting on the loader, or the finished tree.
    indirect enum Raw {
        case scalar(String, tag: String?, plain: Bool, SourceLocation, layout: ScalarLayout = .inline)
        case sequence([Raw], tag: String?, SourceLocation)
        case mapping([(Raw, Raw)], tag: String?, SourceLocation)

        var location: SourceLocation {
            switch self {
            case .scalar(_, _, _, let l, _), .sequence(_, _, let l), .mapping(_, _, let l): return l
            }
        }
    }

    /// The first document of `text` and the number of nodes its aliases bring in, expanded; nil for an empty file.
    static func parse(_ text: String, file: String) throws(ConfigError) -> (root: Raw, aliasNodes: Int)? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw ConfigError(SourceLocation(file: file, line: 1, column: 1), path: "", "cannot initialise the YAML parser")
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(ConfigError) -> (root: Raw, aliasNodes: Int)? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var builder = Builder(file: file, source: bytes)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else {
                    let mark = parser.problem_mark
                    let problem = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
                    let context = parser.context.map { String(cString: $0) + ": " } ?? ""
                    let hint = SyntaxHint.hint(text: text, line: mark.line + 1, column: mark.column + 1)
                    throw ConfigError(SourceLocation(file: file, line: mark.line + 1, column: mark.column + 1), path: "",
                                      hint ?? "YAML syntax error: \(context)\(problem)")
                }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { break }
                if let done = try builder.handle(&event) { return (done, builder.aliasNodes) }
            }
            return builder.root.map { ($0, builder.aliasNodes) }
        }
    }

    private struct Builder {
        let file: String
        var stack: [(kind: Int, items: [Raw], tag: String?, location: SourceLocation, anchor: String?, nodes: Int)] = []
        /// Each anchored node with the number of nodes it expands to.
        var anchors: [String: (node: Raw, nodes: Int)] = [:]
        var root: Raw?
        /// Nodes brought in by aliases so far, each alias counting its anchor's expanded size.
        var aliasNodes = 0

        /// The file's bytes: a literal block's indentation is read from them.
        let source: [UInt8]

        init(file: String, source: [UInt8]) {
            self.file = file
            self.source = source
        }

        /// Where a scalar's lines are: a literal block's first line and indentation, or whether it spans lines.
        func layout(_ event: yaml_event_t) -> ScalarLayout {
            let start = event.start_mark, end = event.end_mark
            guard event.data.scalar.style == YAML_LITERAL_SCALAR_STYLE else { return start.line == end.line ? .inline : .folded }
            // The content starts on the line after the indicator; its indentation is the first non-blank line's.
            var index = Int(start.index)
            while index < source.count, source[index] != 10 { index += 1 }
            var lineStart = index + 1
            while lineStart < source.count {
                var i = lineStart
                while i < source.count, source[i] == 32 { i += 1 }
                if i < source.count, source[i] != 10, source[i] != 13 { return .literal(firstLine: Int(start.line) + 2, indentation: i - lineStart) }
                while i < source.count, source[i] != 10 { i += 1 }
                lineStart = i + 1
            }
            return .folded
        }

        func location(_ mark: yaml_mark_t) -> SourceLocation {
            SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }

        static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
        }

        /// Returns the root when the first document ends.
        mutating func handle(_ event: inout yaml_event_t) throws(ConfigError) -> Raw? {
            let here = location(event.start_mark)
            switch event.type {
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                let node = Raw.scalar(text, tag: Self.string(scalar.tag), plain: scalar.style == YAML_PLAIN_SCALAR_STYLE, here, layout: layout(event))
                if let anchor = Self.string(scalar.anchor) { anchors[anchor] = (node, 1) }
                return try add(node, nodes: 1, at: here)
            case YAML_ALIAS_EVENT:
                let name = Self.string(event.data.alias.anchor) ?? ""
                guard let anchored = anchors[name] else { throw ConfigError(here, path: "", "unknown alias *\(name)") }
                aliasNodes += anchored.nodes
                guard aliasNodes <= YAMLParser.maximumAliasNodes else {
                    throw ConfigError(here, path: "", "aliases expand this file to more than \(YAMLParser.maximumAliasNodes) nodes")
                }
                return try add(anchored.node, nodes: anchored.nodes, at: here)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                guard stack.count < YAMLParser.maximumDepth else {
                    throw ConfigError(here, path: "", "lists and mappings nested more than \(YAMLParser.maximumDepth) deep")
                }
                if event.type == YAML_SEQUENCE_START_EVENT {
                    stack.append((0, [], Self.string(event.data.sequence_start.tag), here, Self.string(event.data.sequence_start.anchor), 1))
                } else {
                    stack.append((1, [], Self.string(event.data.mapping_start.tag), here, Self.string(event.data.mapping_start.anchor), 1))
                }
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let open = stack.removeLast()
                let node: Raw
                if open.kind == 0 {
                    node = .sequence(open.items, tag: open.tag, open.location)
                } else {
                    var pairs: [(Raw, Raw)] = []
                    var index = 0
                    while index + 1 < open.items.count {
                        pairs.append((open.items[index], open.items[index + 1]))
                        index += 2
                    }
                    node = .mapping(pairs, tag: open.tag, open.location)
                }
                if let anchor = open.anchor { anchors[anchor] = (node, open.nodes) }
                return try add(node, nodes: open.nodes, at: open.location)
            case YAML_DOCUMENT_END_EVENT:
                return root
            default:
                break
            }
            return nil
        }

        /// Adds a finished node (`nodes` of them once expanded) to the open list or mapping, or makes it the root.
        private mutating func add(_ node: Raw, nodes: Int, at here: SourceLocation) throws(ConfigError) -> Raw? {
            if stack.isEmpty {
                root = node
                return nil
            }
            let open = stack.count - 1
            // An anchor's expanded size, so an alias of it counts what it brings; saturating, never trapping.
            stack[open].nodes = min(stack[open].nodes + nodes, YAMLParser.maximumAliasNodes + 1)
            stack[open].items.append(node)
            return nil
        }
    }
}
