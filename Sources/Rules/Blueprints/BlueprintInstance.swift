import FoundationEssentials
public import JSON
import Platform

/// An automation blueprint made concrete: each `!input NAME` replaced by the value given for it or the input's
/// default, as Home Assistant does when an automation uses the blueprint. What `blueprint test` runs.
public struct BlueprintInstance: Sendable {
    /// One trigger: its `id` (Home Assistant numbers those without one from 0), its kind and the entity it watches.
    public struct Trigger: Sendable, Equatable {
        public let id: String
        public let kind: String
        public let entityID: String?
    }

    public let file: String
    public let name: String
    /// `trigger_variables`, then `variables`, in the order written; a value may hold templates.
    public let variables: [(name: String, value: JSONValue)]
    public let triggers: [Trigger]
    /// The automation's own `conditions`.
    public let conditions: [JSONValue]
    public let actions: JSONValue

    /// The blueprint at `file` with `inputs` (YAML values as text: `cleaning`, `[cleaning, returning]`, `{seconds: 2}`);
    /// every input neither given nor defaulted, and every input given that the blueprint does not declare, is an error.
    public static func instantiate(file: String, inputs: [String: String]) -> Result<BlueprintInstance, ConfigErrors> {
        let start = SourceLocation(file: file, line: 1, column: 1)
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            return .failure(ConfigErrors([ConfigError(start, path: "", "cannot read \(file)")]))
        }
        let raw: YAMLParser.Raw
        do {
            guard let parsed = try YAMLParser.parse(text, file: file) else { return .failure(ConfigErrors([ConfigError(start, path: "", "the file is empty")])) }
            raw = parsed.root
        } catch {
            return .failure(ConfigErrors([error]))
        }
        var errors: [ConfigError] = []
        // The declared inputs and their defaults, read before anything refers to them.
        guard case .mapping(let top, _, _) = raw, let blueprint = value(top, "blueprint"), case .mapping(let header, _, _) = blueprint else {
            return .failure(ConfigErrors([ConfigError(raw.location, path: "blueprint", "is required")]))
        }
        var values: [String: JSONValue] = [:]
        var declared: [String] = []
        if let inputNode = value(header, "input"), case .mapping(let inputs, _, _) = inputNode {
            for (key, spec) in inputs {
                guard case .scalar(let name, _, _, _, _) = key else { continue }
                declared.append(name)
                if case .mapping(let fields, _, _) = spec, let fallback = value(fields, "default") { values[name] = json(fallback, inputs: [:]) }
            }
        }
        for (name, text) in inputs.sorted(by: { $0.key < $1.key }) {
            guard declared.contains(name) else {
                errors.append(ConfigError(start, path: "--input \(name)", "the blueprint has no input \"\(name)\"" + Suggestion.didYouMean(name, in: declared,
                    otherwise: "; it takes: " + declared.joined(separator: ", "))))
                continue
            }
            do {
                let parsed = try YAMLParser.parse(text, file: "--input \(name)")
                values[name] = parsed.map { json($0.root, inputs: [:]) } ?? .null
            } catch {
                errors.append(error)
            }
        }
        for name in declared where values[name] == nil {
            errors.append(ConfigError(start, path: "--input \(name)", "has no default: give --input \(name)=…"))
        }
        guard errors.isEmpty else { return .failure(ConfigErrors(errors)) }

        let concrete = json(raw, inputs: values)
        let nameText = concrete["blueprint"]?["name"]?.stringValue ?? file
        var variables: [(String, JSONValue)] = []
        for key in ["trigger_variables", "variables"] {
            guard let node = value(top, key), case .mapping(let pairs, _, _) = node else { continue }
            for (name, item) in pairs {
                guard case .scalar(let text, _, _, _, _) = name else { continue }
                variables.append((text, json(item, inputs: values)))
            }
        }
        let triggerList = (concrete["triggers"] ?? concrete["trigger"])?.arrayValue ?? []
        let triggers = triggerList.enumerated().map { index, trigger in
            Trigger(id: trigger["id"]?.stringValue ?? String(index), kind: (trigger["trigger"] ?? trigger["platform"])?.stringValue ?? "",
                    entityID: trigger["entity_id"]?.stringValue ?? trigger["entity_id"]?.arrayValue?.first?.stringValue
                        ?? trigger["event_data"]?["entity_id"]?.stringValue)
        }
        let conditions = (concrete["conditions"] ?? concrete["condition"]).map { $0.arrayValue ?? [$0] } ?? []
        return .success(BlueprintInstance(file: file, name: nameText, variables: variables, triggers: triggers, conditions: conditions,
                                          actions: concrete["actions"] ?? concrete["action"] ?? .array([])))
    }

    private static func value(_ pairs: [(YAMLParser.Raw, YAMLParser.Raw)], _ key: String) -> YAMLParser.Raw? {
        pairs.first { if case .scalar(let text, _, _, _, _) = $0.0 { text == key } else { false } }?.1
    }

    /// YAML as Home Assistant's loader reads it (YAML 1.1 scalars: `on`/`off`/`yes`/`no` are booleans, numbers are
    /// numbers, quoted text is text), with each `!input` replaced by its value.
    static func json(_ raw: YAMLParser.Raw, inputs: [String: JSONValue]) -> JSONValue {
        switch raw {
        case .scalar(let text, let tag, let plain, _, _):
            if tag == "!input" { return inputs[text] ?? .null }
            guard plain, tag == nil else { return .string(text) }
            return scalarValue(text)
        case .sequence(let items, _, _):
            return .array(items.map { json($0, inputs: inputs) })
        case .mapping(let pairs, _, _):
            var object: [String: JSONValue] = [:]
            for (key, item) in pairs {
                guard case .scalar(let name, _, _, _, _) = key else { continue }
                object[name] = json(item, inputs: inputs)
            }
            return .object(object)
        }
    }

    /// A plain scalar's value under YAML 1.1, as PyYAML's safe loader gives it.
    public static func scalarValue(_ text: String) -> JSONValue {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON": return .bool(true)
        case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF": return .bool(false)
        default: break
        }
        if let int = Int(text.replacingAll("_", with: "")), text.first != "_" { return .int(int) }
        if let double = Double(text), double.isFinite, text.contains(".") || text.contains("e") || text.contains("E") { return .double(double) }
        return .string(text)
    }
}
