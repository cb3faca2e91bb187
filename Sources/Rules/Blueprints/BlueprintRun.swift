public import HomeAssistant
public import JSON
public import Templates
import Platform

/// Renders a blueprint's templates: the local engine offline, Home Assistant's `render_template` online.
public protocol BlueprintRenderer: Sendable {
    func render(_ source: String, variables: [String: TemplateValue]) async -> Result<TemplateValue, EvaluationError>
}

/// The local template engine, with the automation's variables.
public struct LocalBlueprintRenderer: BlueprintRenderer {
    let context: EvaluationContext

    public init(context: EvaluationContext) { self.context = context }

    public func render(_ source: String, variables: [String: TemplateValue]) async -> Result<TemplateValue, EvaluationError> {
        do {
            let template = try Template(source, variables: Set(variables.keys))
            return .success(try template.evaluate(in: context, variables: variables))
        } catch let error as Template.CompileError {
            return .failure(EvaluationError("template error: \(error.message)"))
        } catch let error as EvaluationError {
            return .failure(error)
        } catch {
            return .failure(EvaluationError("\(error)"))
        }
    }
}

/// One run of an instantiated blueprint for one trigger, as Home Assistant runs an automation: the variables in
/// order, the conditions, then the actions (`choose`, `if`, `variables`, `condition`, `event`), collecting the events
/// it fires. Service calls, delays and waits are not carried out: they are named in `notes`.
public struct BlueprintRun: Sendable {
    public struct Fired: Sendable {
        /// Where in the actions: `actions[0].choose[1].sequence[0]`.
        public let path: String
        public let eventType: String
        public let data: JSONValue
    }

    public struct Outcome: Sendable {
        public var fired: [Fired] = []
        public var notes: [String] = []
        /// Why the run stopped before its actions (a condition that does not hold).
        public var stopped: String?
    }

    public struct RunError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    let instance: BlueprintInstance
    let renderer: any BlueprintRenderer
    let states: [String: EntityState]

    public init(_ instance: BlueprintInstance, renderer: any BlueprintRenderer, states: [String: EntityState]) {
        self.instance = instance
        self.renderer = renderer
        self.states = states
    }

    /// Runs for the trigger with this id (nil: the first).
    public func run(trigger id: String?) async throws(RunError) -> Outcome {
        guard let trigger = id.map({ id in instance.triggers.first { $0.id == id } }) ?? instance.triggers.first else {
            throw RunError(description: id.map { "the blueprint has no trigger with id \"\($0)\"; its triggers: " + instance.triggers.map(\.id).joined(separator: ", ") }
                ?? "the blueprint has no triggers")
        }
        var variables: [String: TemplateValue] = [:]
        var triggerValue: TemplateMapping = ["id": .string(trigger.id), "platform": .string(trigger.kind), "idx": .string(trigger.id)]
        if let entity = trigger.entityID {
            triggerValue["entity_id"] = .string(entity)
            if let state = states[entity] { triggerValue["to_state"] = Self.stateObject(state); triggerValue["from_state"] = Self.stateObject(state) }
        }
        variables["trigger"] = .mapping(triggerValue)
        for (name, value) in instance.variables {
            variables[name] = try await rendered(value, variables: variables, at: "variables.\(name)")
        }
        var outcome = Outcome()
        for (index, condition) in instance.conditions.enumerated() {
            guard try await holds(condition, variables: variables, at: "conditions[\(index)]") else {
                outcome.stopped = "conditions[\(index)] does not hold: nothing runs"
                return outcome
            }
        }
        _ = try await perform(instance.actions, path: "actions", variables: &variables, outcome: &outcome)
        return outcome
    }

    /// Runs a sequence; false when a `condition` action stopped it.
    private func perform(_ actions: JSONValue, path: String, variables: inout [String: TemplateValue], outcome: inout Outcome) async throws(RunError) -> Bool {
        for (index, action) in (actions.arrayValue ?? [actions]).enumerated() {
            let here = "\(path)[\(index)]"
            if let type = action["event"] {
                let eventType = try await text(rendered(type, variables: variables, at: here + ".event"))
                let data = try await rendered(action["event_data"] ?? [:], variables: variables, at: here + ".event_data").json
                outcome.fired.append(Fired(path: here, eventType: eventType, data: data))
            } else if let assignments = action["variables"]?.objectValue {
                for name in assignments.keys.sorted() {
                    variables[name] = try await rendered(assignments[name]!, variables: variables, at: here + ".variables.\(name)")
                }
            } else if let options = action["choose"] {
                var chosen = false
                for (option, branch) in (options.arrayValue ?? [options]).enumerated() {
                    let conditions = branch["conditions"].map { $0.arrayValue ?? [$0] } ?? []
                    if try await all(conditions, variables: variables, at: here + ".choose[\(option)].conditions") {
                        chosen = true
                        guard try await perform(branch["sequence"] ?? [], path: here + ".choose[\(option)].sequence", variables: &variables, outcome: &outcome) else { return false }
                        break
                    }
                }
                if !chosen, let otherwise = action["default"] {
                    guard try await perform(otherwise, path: here + ".default", variables: &variables, outcome: &outcome) else { return false }
                }
            } else if let conditions = action["if"] {
                let branch = try await all(conditions.arrayValue ?? [conditions], variables: variables, at: here + ".if") ? "then" : "else"
                if let sequence = action[branch] {
                    guard try await perform(sequence, path: here + "." + branch, variables: &variables, outcome: &outcome) else { return false }
                }
            } else if action["condition"] != nil {
                guard try await holds(action, variables: variables, at: here) else {
                    outcome.notes.append("\(here): the condition does not hold; the rest of the sequence does not run")
                    return false
                }
            } else {
                let what = action.objectValue?.keys.sorted().first ?? "?"
                outcome.notes.append("\(here): \(what) is not carried out by a test run")
            }
        }
        return true
    }

    private func all(_ conditions: [JSONValue], variables: [String: TemplateValue], at path: String) async throws(RunError) -> Bool {
        for (index, condition) in conditions.enumerated() where !(try await holds(condition, variables: variables, at: "\(path)[\(index)]")) {
            return false
        }
        return true
    }

    /// Home Assistant's condition kinds a blueprint's templates and states decide: template (also the shorthand, a
    /// bare template), state, numeric_state, trigger, and, or, not.
    private func holds(_ condition: JSONValue, variables: [String: TemplateValue], at path: String) async throws(RunError) -> Bool {
        if case .string = condition { return try await rendered(condition, variables: variables, at: path).isTruthy }
        let kind = condition["condition"]?.stringValue ?? ""
        let nested = condition["conditions"].map { $0.arrayValue ?? [$0] } ?? []
        switch kind {
        case "template":
            return try await rendered(condition["value_template"] ?? "", variables: variables, at: path + ".value_template").isTruthy
        case "and":
            return try await all(nested, variables: variables, at: path + ".conditions")
        case "or":
            for (index, item) in nested.enumerated() where try await holds(item, variables: variables, at: "\(path).conditions[\(index)]") { return true }
            return false
        case "not":
            for (index, item) in nested.enumerated() where try await holds(item, variables: variables, at: "\(path).conditions[\(index)]") { return false }
            return true
        case "trigger":
            let wanted = condition["id"].map { $0.arrayValue ?? [$0] } ?? []
            guard case .mapping(let trigger)? = variables["trigger"], case .string(let id)? = trigger["id"] else { return false }
            return wanted.contains { $0.stringValue == id }
        case "state", "numeric_state":
            let entities = condition["entity_id"].map { $0.arrayValue ?? [$0] }?.compactMap(\.stringValue) ?? []
            guard !entities.isEmpty else { throw RunError(description: "\(path): a \(kind) condition without entity_id") }
            return entities.allSatisfy { entity in
                guard let state = states[entity] else { return false }
                let value = condition["attribute"]?.stringValue.flatMap { state.attributes[$0]?.stringValue } ?? state.state
                if kind == "state" {
                    let wanted = condition["state"].map { $0.arrayValue ?? [$0] } ?? []
                    return wanted.contains { ($0.stringValue ?? $0.jsonText) == value }
                }
                guard let number = Double(value) else { return false }
                if let above = condition["above"]?.doubleValue, !(number > above) { return false }
                if let below = condition["below"]?.doubleValue, !(number < below) { return false }
                return true
            }
        default:
            throw RunError(description: "\(path): a \(kind.isEmpty ? "condition" : kind) condition is not decided by a test run; use a template condition")
        }
    }

    /// A value with every template in it rendered; text that is all template gets Home Assistant's native type.
    private func rendered(_ value: JSONValue, variables: [String: TemplateValue], at path: String) async throws(RunError) -> TemplateValue {
        switch value {
        case .string(let source) where source.containsText("{{") || source.containsText("{%"):
            switch await renderer.render(source, variables: variables) {
            case .success(let result):
                if case .string(let text) = result { return Self.nativeType(text) }
                return result
            case .failure(let error):
                throw RunError(description: "\(path): \(error.message)")
            }
        case .array(let items):
            var out: [TemplateValue] = []
            for (index, item) in items.enumerated() { out.append(try await rendered(item, variables: variables, at: "\(path)[\(index)]")) }
            return .list(out)
        case .object(let members):
            var out = TemplateMapping()
            for key in members.keys.sorted() { out[key] = try await rendered(members[key]!, variables: variables, at: "\(path).\(key)") }
            return .mapping(out)
        default:
            return TemplateValue(value)
        }
    }

    private func text(_ value: TemplateValue) -> String {
        if case .string(let text) = value { return text }
        return value.json.stringValue ?? value.json.jsonText
    }

    /// What Home Assistant makes of rendered text (its result parsing): a number, a boolean or None when it reads as
    /// one, else the text.
    public static func nativeType(_ text: String) -> TemplateValue {
        switch text {
        case "True": return .bool(true)
        case "False": return .bool(false)
        case "None": return .none
        default: break
        }
        if let int = Int(text), !(text.hasPrefix("0") && text.count > 1), !text.hasPrefix("+") { return .int(int) }
        if let double = Double(text), double.isFinite, text.contains("."), !text.hasPrefix("+"), !text.hasPrefix(".") { return .double(double) }
        return .string(text)
    }

    /// A state object as a template sees `trigger.to_state`: state, entity_id, attributes.
    static func stateObject(_ state: EntityState) -> TemplateValue {
        .mapping(["entity_id": .string(state.entityID), "state": .string(state.state), "attributes": TemplateValue(.object(state.attributes.dictionary))])
    }
}

extension TemplateValue {
    /// The value written as a Jinja literal, to hand a variable to Home Assistant's `render_template` in a
    /// `{% set %}`: text as a JSON string (Jinja reads its escapes), numbers, True/False/None, lists and mappings;
    /// a datetime as its ISO text, a timedelta as its seconds (as a blueprint's variables carry them, rendered).
    public var jinjaLiteral: String {
        switch self {
        case .none, .undefined: return "None"
        case .bool(let value): return value ? "True" : "False"
        case .int(let value): return String(value)
        case .double(let value): return value.isFinite ? "\(value)" : "None"
        case .string(let text): return JSONValue.string(text).jsonText
        case .datetime, .timedelta, .date, .time: return json.jsonText
        case .list(let items): return "[" + items.map(\.jinjaLiteral).joined(separator: ", ") + "]"
        case .mapping(let members):
            return "{" + members.map { JSONValue.string($0.key).jsonText + ": " + $0.value.jinjaLiteral }.joined(separator: ", ") + "}"
        }
    }
}
