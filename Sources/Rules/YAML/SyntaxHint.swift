import Platform

/// What a YAML syntax error most likely means, said the way Home Assistant's configuration check says it: the
/// mistakes people make copying from Developer Tools, not libyaml's parser states.
enum SyntaxHint {
    /// A hint for the error libyaml reports at `line`:`column` (1-based), or nil to keep libyaml's words.
    static func hint(text: String, line: Int, column: Int) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return nil }
        let here = lines[line - 1]
        let upToError = here.prefix(max(0, column))
        if upToError.contains("\t") || (column - 1 < here.count && here.dropFirst(column - 1).first == "\t") {
            return "tabs are not allowed in YAML; indent with spaces"
        }
        if let template = unquotedTemplate(in: here) {
            return "a template must be quoted: write \"\(template)\" (unquoted, YAML reads { as the start of a mapping)"
        }
        return nil
    }

    /// The `{{ … }}` or `{% … %}` on the line when it is not inside quotes.
    static func unquotedTemplate(in line: Substring) -> String? {
        var quote: Character?
        var index = line.startIndex
        while index < line.endIndex {
            let c = line[index]
            if let open = quote {
                if c == open { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "#" {
                return nil
            } else if c == "{", let next = line.index(index, offsetBy: 1, limitedBy: line.endIndex), next < line.endIndex,
                      line[next] == "{" || line[next] == "%" {
                let close = line[next] == "{" ? "}}" : "%}"
                let rest = String(line[index...])
                if let end = rest.firstRange(ofText: close) { return String(rest[..<end.upperBound]) }
                return rest
            }
            index = line.index(after: index)
        }
        return nil
    }
}
