import Platform
import LiveActivity
/// Reads a YAML mapping key by key, and reports the keys nobody asked for: a typo must never silently do nothing.
struct MappingReader {
    let node: YAMLNode
    let path: String
    private let entries: [(key: YAMLNode, value: YAMLNode)]

    /// Nil (with an error) when `node` is not a mapping.
    init?(_ node: YAMLNode, path: String, errors: inout [ConfigError]) {
        guard case .mapping(let entries) = node.kind else {
            if !node.isNull { errors.append(ConfigError(node.location, path: path, "expected a mapping, got \(node.kindName)")) }
            return nil
        }
        self.node = node
        self.path = path
        self.entries = entries
    }

    var keys: [String] { entries.compactMap { $0.key.scalar } }

    subscript(key: String) -> YAMLNode? {
        entries.first { $0.key.scalar == key }.flatMap { $0.value.isNull ? nil : $0.value }
    }

    func keyNode(_ key: String) -> YAMLNode? { entries.first { $0.key.scalar == key }?.key }

    var pairs: [(key: YAMLNode, value: YAMLNode)] { entries }

    /// Reports every key not in `allowed`, with a suggestion when one is close.
    func rejectUnknown(allowed: [String], errors: inout [ConfigError]) {
        for (key, _) in entries {
            guard let name = key.scalar, !allowed.contains(name) else { continue }
            var message = "unknown key \"\(name)\""
            message += Suggestion.didYouMean(name, in: allowed, otherwise: "; expected: " + allowed.joined(separator: ", "))
            errors.append(ConfigError(key.location, path: joinedPath(path, name), message))
        }
    }

    func string(_ key: String, errors: inout [ConfigError]) -> String? {
        guard let value = self[key] else { return nil }
        guard let text = value.scalar else {
            errors.append(ConfigError(value.location, path: joinedPath(path, key), "expected a single value, got \(value.kindName)"))
            return nil
        }
        return text
    }

    /// One value or a list of them (`backend: phone` or `backend: [phone, aivi]`), each with where it is written;
    /// nil when the key is absent or (with an error) not scalars.
    func strings(_ key: String, errors: inout [ConfigError]) -> [(String, SourceLocation)]? {
        guard let value = self[key] else { return nil }
        switch value.kind {
        case .scalar(let text): return [(text, value.location)]
        case .sequence(let items):
            var values: [(String, SourceLocation)] = []
            for item in items {
                guard let text = item.scalar, !item.isNull else {
                    errors.append(ConfigError(item.location, path: joinedPath(path, key), "expected a name, got \(item.kindName)"))
                    return nil
                }
                values.append((text, item.location))
            }
            if values.isEmpty { errors.append(ConfigError(value.location, path: joinedPath(path, key), "is an empty list")) }
            return values.isEmpty ? nil : values
        case .mapping:
            errors.append(ConfigError(value.location, path: joinedPath(path, key), "expected a name or a list of names, got a mapping"))
            return nil
        }
    }

    /// The value at `key` as an error shows it: quoted, or `!secret NAME` when it came from a secret.
    func shown(_ key: String) -> String { self[key]?.quoted ?? "nothing" }

    func bool(_ key: String, errors: inout [ConfigError]) -> Bool? {
        guard let value = self[key] else { return nil }
        guard let text = value.scalar else {
            errors.append(ConfigError(value.location, path: joinedPath(path, key), "expected true or false, got \(value.kindName)"))
            return nil
        }
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            errors.append(ConfigError(value.location, path: joinedPath(path, key), "expected true or false, got \(value.quoted)"))
            return nil
        }
    }

    /// A duration in any form Home Assistant's `delay:` takes (`00:05:00`, `5:00`, seconds, `{minutes: 5}`) or
    /// LiveBridge's short one (`5s`, `2m`, `1h30m`, `250ms`); never negative, at most `ConfigDuration.longest`.
    func duration(_ key: String, errors: inout [ConfigError]) -> Duration? {
        guard let value = self[key] else { return nil }
        switch ConfigDuration.parse(value) {
        case .success(let duration): return duration
        case .failure(let problem):
            errors.append(ConfigError(problem.location ?? value.location, path: joinedPath(path, key) + (problem.key.map { "." + $0 } ?? ""),
                                      problem.message))
            return nil
        }
    }
}

