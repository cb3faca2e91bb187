import Platform
import FoundationEssentials
import LiveActivity

/// `livebridge blueprint lint`: checks a Home Assistant automation blueprint that fires LiveBridge's event —
/// required keys, `!input` references, selector kinds, and the event's fixed payload against its template's schema.
public enum BlueprintLinter {
    /// Home Assistant's selector kinds (2025.4).
    public static let selectorKinds: Set<String> = [
        "action", "addon", "area", "assist_pipeline", "attribute", "backup_location", "boolean", "color_rgb", "color_temp",
        "condition", "config_entry", "constant", "conversation_agent", "country", "date", "datetime", "device", "duration",
        "entity", "floor", "icon", "label", "language", "location", "media", "navigation", "number", "object", "qr_code",
        "select", "selector", "state", "statistic", "target", "template", "text", "theme", "time", "trigger", "ui_action", "ui_color",
    ]

    /// The `action` values an event may carry (ActivityEvent): what LiveBridge accepts.
    public static let actions = ["start", "update", "end", "ONGOING", "IDLE"]

    /// `eventType`: the event LiveBridge listens to (the rules file's `events.type`); `backends`: the backends the
    /// rules declare, when known (nil: any name is taken).
    public static func lint(file: String, eventType: String = "livebridge_activity", backends: [String]? = nil) -> [ConfigError] {
        let start = SourceLocation(file: file, line: 1, column: 1)
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            return [ConfigError(start, path: "", "cannot read \(file)")]
        }
        let raw: YAMLParser.Raw
        do {
            guard let parsed = try YAMLParser.parse(text, file: file) else { return [ConfigError(start, path: "", "the file is empty")] }
            raw = parsed.root
        } catch {
            return [error]
        }
        var inputsUsed: [(name: String, location: SourceLocation)] = []
        let root = node(raw, inputs: &inputsUsed)
        var errors: [ConfigError] = []
        guard let top = MappingReader(root, path: "", errors: &errors) else { return errors }

        var declared: Set<String> = []
        if let blueprintNode = top["blueprint"], let blueprint = MappingReader(blueprintNode, path: "blueprint", errors: &errors) {
            for key in ["name", "description", "domain", "source_url"] where blueprint.string(key, errors: &errors) == nil {
                errors.append(ConfigError(blueprintNode.location, path: "blueprint.\(key)", "is required"))
            }
            if let domain = blueprint.string("domain", errors: &errors), domain != "automation" {
                errors.append(ConfigError(blueprint["domain"]!.location, path: "blueprint.domain", "\"\(domain)\": these blueprints are automations"))
            }
            if let url = blueprint.string("source_url", errors: &errors), !(url.hasPrefix("https://") || url.hasPrefix("http://")) {
                errors.append(ConfigError(blueprint["source_url"]!.location, path: "blueprint.source_url", "\"\(url)\" is not an http(s) URL"))
            }
            if let ha = blueprint["homeassistant"], let reader = MappingReader(ha, path: "blueprint.homeassistant", errors: &errors) {
                if reader.string("min_version", errors: &errors) == nil {
                    errors.append(ConfigError(ha.location, path: "blueprint.homeassistant.min_version", "is required, e.g. \"2024.10.0\""))
                }
            } else {
                errors.append(ConfigError(blueprintNode.location, path: "blueprint.homeassistant.min_version", "is required, e.g. \"2024.10.0\""))
            }
            if let inputNode = blueprint["input"], let inputs = MappingReader(inputNode, path: "blueprint.input", errors: &errors) {
                for (key, value) in inputs.pairs {
                    guard let name = key.scalar else { continue }
                    declared.insert(name)
                    checkInput(name, value, errors: &errors)
                }
            } else {
                errors.append(ConfigError(blueprintNode.location, path: "blueprint.input", "is required: the inputs users fill in"))
            }
        } else {
            errors.append(ConfigError(root.location, path: "blueprint", "is required"))
        }
        if top["triggers"] == nil && top["trigger"] == nil { errors.append(ConfigError(root.location, path: "triggers", "is required")) }
        let actions = top["actions"] ?? top["action"]
        if actions == nil { errors.append(ConfigError(root.location, path: "actions", "is required")) }
        for use in inputsUsed where !declared.contains(use.name) {
            var message = "!input \(use.name) is not declared under blueprint.input"
            message += Suggestion.didYouMean(use.name, in: declared.sorted())
            errors.append(ConfigError(use.location, path: "", message))
        }
        if let actions {
            let context = EventContext(eventType: eventType, backends: backends)
            checkEvents(actions, path: top["actions"] != nil ? "actions" : "action", context: context, errors: &errors)
        }
        return errors.sortedByPosition()
    }

    private static func checkInput(_ name: String, _ node: YAMLNode, errors: inout [ConfigError]) {
        let path = "blueprint.input.\(name)"
        guard let input = MappingReader(node, path: path, errors: &errors) else { return }
        input.rejectUnknown(allowed: ["name", "description", "default", "selector"], errors: &errors)
        guard let selectorNode = input["selector"] else {
            errors.append(ConfigError(node.location, path: path + ".selector", "is required"))
            return
        }
        guard let selector = MappingReader(selectorNode, path: path + ".selector", errors: &errors) else { return }
        if selector.keys.count != 1 {
            errors.append(ConfigError(selectorNode.location, path: path + ".selector", "needs exactly one selector kind, found \(selector.keys.count)"))
        }
        for kind in selector.keys where !selectorKinds.contains(kind) {
            var message = "unknown selector \"\(kind)\""
            message += Suggestion.didYouMean(kind, in: selectorKinds.sorted())
            errors.append(ConfigError(selector.keyNode(kind)!.location, path: path + ".selector.\(kind)", message))
        }
    }

    /// What an event must match to reach LiveBridge.
    private struct EventContext {
        let eventType: String
        let backends: [String]?
    }

    /// Every `event:` action: its type is the one LiveBridge listens to, a fixed `action` one it accepts, a fixed
    /// `backend` one the rules declare, and a `payload` with a fixed `template` is checked against that template.
    private static func checkEvents(_ node: YAMLNode, path: String, context: EventContext, errors: inout [ConfigError]) {
        switch node.kind {
        case .sequence(let items):
            for (index, item) in items.enumerated() { checkEvents(item, path: "\(path)[\(index)]", context: context, errors: &errors) }
        case .mapping(let entries):
            if let event = entries.first(where: { $0.key.scalar == "event" })?.value, let type = event.scalar, !FieldCompiler.isTemplate(type),
               type != context.eventType {
                let message = "\"\(type)\" is not the event LiveBridge listens to" + Suggestion.didYouMean(type, in: [context.eventType],
                    otherwise: " (\"\(context.eventType)\"; the rules file's events.type names another)")
                errors.append(ConfigError(event.location, path: path + ".event", message))
            }
            if let data = entries.first(where: { $0.key.scalar == "event_data" })?.value, case .mapping(let fields) = data.kind {
                if let action = fields.first(where: { $0.key.scalar == "action" })?.value, let text = action.scalar,
                   !FieldCompiler.isTemplate(text), !text.hasPrefix("{{ !input"), !actions.contains(text) {
                    errors.append(ConfigError(action.location, path: path + ".event_data.action",
                                              "unknown action \"\(text)\"" + Suggestion.didYouMean(text, in: actions, otherwise: "; LiveBridge takes " + actions.joined(separator: ", "))))
                }
                if let backends = context.backends, let backend = fields.first(where: { $0.key.scalar == "backend" })?.value,
                   let name = backend.scalar, !FieldCompiler.isTemplate(name), !name.hasPrefix("{{ !input"), !backends.contains(name) {
                    errors.append(ConfigError(backend.location, path: path + ".event_data.backend",
                                              "no backend named \"\(name)\"" + Suggestion.didYouMean(name, in: backends, otherwise: "; the rules declare: " + backends.joined(separator: ", "))))
                }
            }
            if entries.contains(where: { $0.key.scalar == "event" }),
               let data = entries.first(where: { $0.key.scalar == "event_data" })?.value,
               case .mapping(let fields) = data.kind,
               let payload = fields.first(where: { $0.key.scalar == "payload" })?.value,
               case .mapping(let payloadFields) = payload.kind,
               let template = payloadFields.first(where: { $0.key.scalar == "template" })?.value.scalar,
               !FieldCompiler.isTemplate(template) {
                var compiler = FieldCompiler()
                compiler.compilesTemplates = false
                _ = compiler.compile(payload, as: AiviSchema.content, path: path + ".event_data.payload")
                errors += compiler.errors
            }
            for (key, value) in entries where ["sequence", "then", "else", "default", "choose", "conditions", "parallel"].contains(key.scalar ?? "") {
                checkEvents(value, path: path + "." + (key.scalar ?? ""), context: context, errors: &errors)
            }
        default:
            break
        }
    }

    /// The blueprint as nodes; `!input NAME` becomes a run-time value and is remembered with where it was written.
    private static func node(_ raw: YAMLParser.Raw, inputs: inout [(name: String, location: SourceLocation)]) -> YAMLNode {
        switch raw {
        case .scalar(let text, let tag, let plain, let location, let layout):
            if tag == "!input" {
                inputs.append((text, location))
                return YAMLNode(.scalar("{{ !input }}"), at: location)
            }
            var node = YAMLNode(.scalar(text), at: location, isPlain: plain && tag == nil)
            node.layout = layout
            return node
        case .sequence(let items, _, let location):
            return YAMLNode(.sequence(items.map { node($0, inputs: &inputs) }), at: location)
        case .mapping(let pairs, _, let location):
            return YAMLNode(.mapping(pairs.map { (node($0.0, inputs: &inputs), node($0.1, inputs: &inputs)) }), at: location)
        }
    }
}
