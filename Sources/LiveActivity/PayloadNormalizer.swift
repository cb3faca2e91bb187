import FoundationEssentials
import Platform
public import JSON

/// Checks a payload against its schema and puts it in the exact form the backend receives:
/// shorthands expanded, numbers from text parsed, text from numbers printed, empty optionals left out (never null).
public enum PayloadNormalizer {
    public static func normalize(_ value: JSONValue, as schema: FieldSchema, path: String = "") -> (JSONValue?, [PayloadIssue]) {
        var issues: [PayloadIssue] = []
        let result = normalize(value, schema, path, &issues)
        return (result, issues)
    }

    static func normalize(_ value: JSONValue, _ schema: FieldSchema, _ path: String, _ issues: inout [PayloadIssue]) -> JSONValue? {
        switch schema {
        case .text(let maxLength):
            guard let text = scalarText(value) else {
                issues.append(PayloadIssue(path: path, "expected text, got \(describe(value))"))
                return nil
            }
            // Counted as the services' JSON schemas count (maxLength: code points), not as letters on screen: a flag
            // emoji is two, a decomposed é two.
            let length = text.unicodeScalars.count
            if let maxLength, length > maxLength {
                issues.append(PayloadIssue(path: path, "\"\(text)\" is \(length) characters (Unicode code points); at most \(maxLength) fit"))
                return nil
            }
            return .string(text)
        case .number(let range):
            guard let number = number(value) else {
                issues.append(PayloadIssue(path: path, "expected a number, got \(describe(value))"))
                return nil
            }
            guard range.contains(number) else {
                issues.append(PayloadIssue(path: path, "\(format(number)) is out of range \(format(range.lowerBound))–\(format(range.upperBound))"))
                return nil
            }
            return .double(number)
        case .percentOrFraction:
            guard let number = number(value) else {
                issues.append(PayloadIssue(path: path, "expected a number, got \(describe(value))"))
                return nil
            }
            guard (0...100).contains(number) else {
                issues.append(PayloadIssue(path: path, "\(format(number)) is out of range 0–1 (or 0–100 as a percentage)"))
                return nil
            }
            return .double(number > 1 ? number / 100 : number)
        case .integer(let range):
            guard let number = number(value), number.rounded() == number, abs(number) < 9e15 else {
                issues.append(PayloadIssue(path: path, "expected a whole number, got \(describe(value))"))
                return nil
            }
            guard range.contains(Int(number)) else {
                issues.append(PayloadIssue(path: path, "\(Int(number)) is out of range \(range.lowerBound)–\(range.upperBound)"))
                return nil
            }
            return .int(Int(number))
        case .boolean:
            switch value {
            case .bool: return value
            case .string(let s) where ["true", "false", "on", "off"].contains(s.lowercased()):
                return .bool(s.lowercased() == "true" || s.lowercased() == "on")
            default:
                issues.append(PayloadIssue(path: path, "expected true or false, got \(describe(value))"))
                return nil
            }
        case .choice(let name, let options):
            guard case .string(let word) = value, options.contains(word) else {
                let given = scalarText(value) ?? describe(value)
                let hint = Suggestion.didYouMean(given, in: options)
                let message = "unknown \(name) \"\(given)\"" + (hint.isEmpty ? "; expected one of: " + options.joined(separator: ", ") : hint)
                issues.append(PayloadIssue(path: path, message))
                return nil
            }
            return value
        case .url:
            guard case .string(let text) = value else {
                issues.append(PayloadIssue(path: path, "expected a URL, got \(describe(value))"))
                return nil
            }
            if let problem = URLCheck.problem(text) {
                issues.append(PayloadIssue(path: path, problem))
                return nil
            }
            return value
        case .custom(let name, let check):
            guard let text = scalarText(value) else {
                issues.append(PayloadIssue(path: path, "expected \(name), got \(describe(value))"))
                return nil
            }
            if let problem = check(text) {
                issues.append(PayloadIssue(path: path, problem))
                return nil
            }
            return .string(text)
        case .list(let element, let count):
            guard case .array(let items) = value else {
                issues.append(PayloadIssue(path: path, "expected a list, got \(describe(value))"))
                return nil
            }
            guard count.contains(items.count) else {
                issues.append(PayloadIssue(path: path, "has \(items.count) item\(items.count == 1 ? "" : "s"); \(count.lowerBound)–\(count.upperBound) allowed"))
                return nil
            }
            var out: [JSONValue] = []
            for (index, item) in items.enumerated() {
                if let normalized = normalize(item, element, "\(path)[\(index)]", &issues) { out.append(normalized) }
            }
            return .array(out)
        case .map(let element, let keyMaxLength, let count):
            guard case .object(let members) = value else {
                issues.append(PayloadIssue(path: path, "expected a mapping, got \(describe(value))"))
                return nil
            }
            guard count.contains(members.count) else {
                issues.append(PayloadIssue(path: path, "has \(members.count) name\(members.count == 1 ? "" : "s"); \(count.lowerBound)–\(count.upperBound) allowed"))
                return nil
            }
            var out: [String: JSONValue] = [:]
            for (key, item) in members.sorted(by: { $0.key < $1.key }) {
                guard !key.isEmpty, key.count <= keyMaxLength else {
                    issues.append(PayloadIssue(path: joinedPath(path, key), "a name must be 1–\(keyMaxLength) characters"))
                    continue
                }
                if let normalized = normalize(item, element, joinedPath(path, key), &issues) { out[key] = normalized }
            }
            return .object(out)
        case .object(let object):
            return normalizeObject(value, object, path, &issues)
        case .scalarOrObject(let scalar, let object):
            if case .object = value { return normalizeObject(value, object, path, &issues) }
            return normalize(value, scalar, path, &issues)
        case .tagged(let key, let variants):
            guard case .object(let members) = value else {
                issues.append(PayloadIssue(path: path, "expected a mapping with \(key): \(variants.keys.sorted().joined(separator: " | "))"))
                return nil
            }
            guard case .string(let tag)? = members[key], let variant = variants[tag] else {
                let options = variants.keys.sorted()
                let given = members[key].flatMap(scalarText)
                var message = given.map { "unknown \(key) \"\($0)\"" } ?? "\(key) is required"
                let hint = given.map { Suggestion.didYouMean($0, in: options) } ?? ""
                message += hint.isEmpty ? "; expected one of: " + options.joined(separator: ", ") : hint
                issues.append(PayloadIssue(path: joinedPath(path, key), message))
                return nil
            }
            return normalizeObject(value, variant, path, &issues)
        }
    }

    static func normalizeObject(_ value: JSONValue, _ schema: ObjectSchema, _ path: String, _ issues: inout [PayloadIssue]) -> JSONValue? {
        var members: [String: JSONValue]
        switch value {
        case .object(let m): members = m
        case .string, .int, .double, .bool:
            guard let shorthand = schema.shorthand else { fallthrough }
            members = [shorthand: value]
        default:
            issues.append(PayloadIssue(path: path, "expected a mapping, got \(describe(value))"))
            return nil
        }
        let before = issues.count
        var out: [String: JSONValue] = [:]
        out.reserveCapacity(members.count)
        // What was given is looked up in the schema (a payload gives a few of a schema's dozens of fields, once a
        // push), then the required names it left out. At the first problem the object is gone over again, the way
        // that tells each problem in its order (`tellProblems`).
        var problem = false
        for (key, given) in members {
            guard let field = schema.field(key) else { problem = true; break }
            if leftEmpty(given, field) {
                if field.required { problem = true; break }
                continue  // an optional field left empty: not sent
            }
            if let normalized = normalize(given, field.schema, joinedPath(path, key), &issues) { out[key] = normalized }
            if issues.count != before { break }
        }
        if problem || issues.count != before || schema.requiredNames.contains(where: { members[$0] == nil }) {
            // Told as they always were: unknown keys first, then the fields in the schema's order (issues with the
            // same path keep that order through the sort).
            issues.removeSubrange(before...)
            tellProblems(members, schema, path, &issues)
            issues[before...].sort { $0.path < $1.path }
            return nil
        }
        for check in schema.checks { issues += check(out, path) }
        return issues.count == before ? .object(out) : nil
    }

    /// Given as nothing: null, or an optional field's empty text (a template that rendered nothing).
    static func leftEmpty(_ given: JSONValue, _ field: ObjectSchema.Field) -> Bool {
        given == .null || (!field.required && given == .string(""))
    }

    /// An object's issues, each told: its unknown keys (with what they may have meant), then field by field in the
    /// schema's order. Only for an object known to have some (`normalizeObject`'s quick pass found one).
    static func tellProblems(_ members: [String: JSONValue], _ schema: ObjectSchema, _ path: String, _ issues: inout [PayloadIssue]) {
        for key in members.keys where schema.field(key) == nil {
            var message = "unknown key \"\(key)\""
            message += Suggestion.didYouMean(key, in: schema.names)
            issues.append(PayloadIssue(path: joinedPath(path, key), message))
        }
        for field in schema.fields {
            guard let given = members[field.name], !leftEmpty(given, field) else {
                if field.required { issues.append(PayloadIssue(path: joinedPath(path, field.name), "is required")) }
                continue
            }
            _ = normalize(given, field.schema, joinedPath(path, field.name), &issues)
        }
    }

    /// A scalar as the text a field shows: Python's str(), as Home Assistant renders a template into text (a float
    /// keeps its fraction, `30.0`; booleans are `True`/`False`).
    public static func scalarText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return d.isNaN ? "nan" : d.isInfinite ? (d < 0 ? "-inf" : "inf") : d.description
        case .bool(let b): return b ? "True" : "False"
        default: return nil
        }
    }

    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d.isFinite ? d : nil
        case .string(let s): return PythonLiteral.number(s)
        default: return nil
        }
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "nothing"
        case .object: return "a mapping"
        case .array: return "a list"
        case .string(let s): return "\"\(s)\""
        default: return scalarText(value) ?? "a value"
        }
    }

    static func format(_ d: Double) -> String {
        d.rounded() == d && abs(d) < 1e15 ? String(Int(d)) : d.description
    }
}

/// A tap_url: any scheme, but a real URL.
enum URLCheck {
    static func problem(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return "\"\(text)\" is not a URL: it has no scheme (https://, homeassistant://…)" }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else {
            return "\"\(text)\" is not a URL: \"\(scheme)\" is not a scheme"
        }
        let rest = text[text.index(after: colon)...]
        guard !rest.isEmpty else { return "\"\(text)\" is not a URL: nothing after the scheme" }
        // http(s) URLs need a host (PushWard's document says so; a browser could not open one without).
        if ["http", "https"].contains(scheme.lowercased()), !rest.hasPrefix("//") || rest.dropFirst(2).prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" }).isEmpty {
            return "\"\(text)\" is not a URL: http(s) URLs need a host (https://host/…)"
        }
        guard !text.contains(where: { $0 == " " || $0 == "\n" || $0 == "\t" }) else {
            return "\"\(text)\" is not a URL: spaces must be written %20"
        }
        // What runs code or reads files when tapped is refused (PushWard refuses these too), and a URL fits 2,048.
        guard !["javascript", "data", "file", "vbscript"].contains(scheme.lowercased()) else {
            return "\(OutsideText.quoted(String(text.prefix(40)))) is not allowed: \(scheme): URLs run code or read files when tapped"
        }
        guard text.utf8.count <= 2_048 else { return "the URL is \(text.utf8.count) bytes; at most 2048" }
        return nil
    }
}
