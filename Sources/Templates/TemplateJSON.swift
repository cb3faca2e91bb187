public import JSON

/// JSON in and out of templates with dicts in their own order: `from_json` keeps the text's order, `to_json` writes
/// orjson's compact or indented form (Home Assistant's), `tojson` Python's json.dumps (Jinja's, keys sorted).
enum TemplateJSON {
    /// How the text is laid out.
    struct Style {
        /// `", "` and `": "` between items (json.dumps) rather than `","` and `":"` (orjson).
        var spaced = false
        /// Two spaces per level, one item a line (`pretty_print`, `indent=2`).
        var indented = false
        var sortKeys = false
        /// Everything beyond ASCII written as a `\u` escape of four hex digits (json.dumps' default, `ensure_ascii`).
        var asciiOnly = false
    }

    /// The value of a JSON text, objects in the order the text gives their members.
    static func parse(_ text: String) throws -> TemplateValue {
        _ = try JSONParser.parse(text)  // checked whole first: the reader below trusts it
        return try JSONText(text).read { reader in try read(&reader) }
    }

    /// The value of a JSON text already checked, objects in the order the text gives their members.
    static func value(of text: JSONText) throws -> TemplateValue {
        try text.checked().read { reader in try read(&reader) }
    }

    private static func read(_ reader: inout JSONReader) throws -> TemplateValue {
        switch reader.nextKind {
        case .object?:
            var members = TemplateMapping()
            try reader.readObject { reader, key in members[key] = try read(&reader) }
            return .mapping(members)
        case .array?:
            var items: [TemplateValue] = []
            try reader.readArray { reader in items.append(try read(&reader)) }
            return .list(items)
        default:
            return TemplateValue(try reader.readValue())
        }
    }

    /// The JSON text of a value.
    static func text(_ value: TemplateValue, _ style: Style) -> String {
        var out = ""
        write(value, style, depth: 0, into: &out)
        return out
    }

    private static func write(_ value: TemplateValue, _ style: Style, depth: Int, into out: inout String) {
        guard out.utf8.count <= EvaluationLimits.maximumTextLength else { return }
        func newline(_ level: Int) {
            out += "\n" + String(repeating: " ", count: 2 * level)
        }
        let comma = style.indented ? "," : (style.spaced ? ", " : ",")
        let colon = style.spaced || style.indented ? ": " : ":"
        switch value {
        case .list(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                guard out.utf8.count <= EvaluationLimits.maximumTextLength else { return }
                if i > 0 { out += comma }
                if style.indented { newline(depth + 1) }
                write(item, style, depth: depth + 1, into: &out)
            }
            if style.indented { newline(depth) }
            out += "]"
        case .mapping(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{"
            let keys = style.sortKeys ? members.keys.sorted() : members.keys
            for (i, key) in keys.enumerated() {
                guard out.utf8.count <= EvaluationLimits.maximumTextLength else { return }
                if i > 0 { out += comma }
                if style.indented { newline(depth + 1) }
                out += scalar(.string(key), style) + colon
                write(members[key]!, style, depth: depth + 1, into: &out)
            }
            if style.indented { newline(depth) }
            out += "}"
        default:
            out += scalar(value, style)
        }
    }

    private static func scalar(_ value: TemplateValue, _ style: Style) -> String {
        var text = value.json.jsonText
        // orjson writes an exponent bare (1e20, 1.5e-7); json.dumps as Python's repr (1e+20, 1.5e-07).
        if !style.spaced, case .double = value, let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            var exponent = text[text.index(after: e)...]
            let negative = exponent.first == "-"
            if exponent.first == "+" || exponent.first == "-" { exponent = exponent.dropFirst() }
            let digits = exponent.drop { $0 == "0" }
            text = String(text[...e]) + (negative ? "-" : "") + (digits.isEmpty ? "0" : String(digits))
        }
        guard style.asciiOnly, text.utf8.contains(where: { $0 >= 0x80 }) else { return text }
        var out = ""
        for unit in text.utf16 {
            if unit < 0x80 {
                out.unicodeScalars.append(Unicode.Scalar(unit)!)
            } else {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }
}

extension TemplateValue {
    /// What Home Assistant rendered (`render_template`'s result): from its text when known, so a dict keeps the order
    /// Home Assistant printed its keys in; else from the decoded value (keys by name).
    public init(homeAssistantResult value: JSONValue, text: JSONText?) {
        self = text.flatMap { try? TemplateJSON.value(of: $0) } ?? TemplateValue(value)
    }
}
