import Platform
import LiveActivity

/// Decodes one entry of `activities:` into an `ActivityRule`.
enum ActivityDecoder {
    /// Keys of a rule that are not payload fields.
    static let ruleKeys = ["backend", "template", "active_when", "on_end", "status", "slug", "job_id", "tag",
                           "debounce", "max_wait", "min_interval", "entity", "dismiss_after"]

    /// Whether `name` is a key an activity takes (a rule key or a payload field of any template): written elsewhere,
    /// it was indented too little.
    static func isActivityKey(_ name: String) -> Bool {
        ruleKeys.contains(name) || activityFieldNames.contains(name)
    }

    private static let activityFieldNames: Set<String> = {
        var names: Set<String> = []
        for kind in BackendKind.allCases {
            for template in TemplateCatalog.templates(for: kind) {
                for field in TemplateCatalog.schema(template: template, backend: kind)?.fields ?? [] { names.insert(field.name) }
            }
        }
        return names
    }()

    static func decode(id: String, _ node: YAMLNode, backends: [String: RulesFile.Backend], defaultBackend: String?,
                       budget defaults: UpdateBudget, errors: inout [ConfigError]) -> ActivityRule? {
        let path = "activities." + id
        guard let reader = MappingReader(node, path: path, errors: &errors) else { return nil }
        let before = errors.count

        // Backend.
        var backend: RulesFile.Backend?
        if let name = reader.string("backend", errors: &errors) {
            backend = backends[name]
            if backend == nil { errors.append(ConfigError(reader["backend"]!.location, path: path + ".backend", RulesLoader.unknownBackend(name, backends))) }
        } else if let name = defaultBackend {
            backend = backends[name]
        } else {
            errors.append(ConfigError(node.location, path: path + ".backend", backends.isEmpty
                ? "no backend: declare one under backends:" : "is required when defaults.backend is not set"))
        }

        // Template and its schema.
        let template = reader.string("template", errors: &errors)
        if template == nil { errors.append(ConfigError(node.location, path: path + ".template", "is required")) }
        var schema: ObjectSchema?
        var mapping = PayloadMapping.native
        if let backend, let template {
            (schema, mapping) = resolve(template: template, backend: backend.kind, reader: reader)
            if schema == nil {
                let options = TemplateCatalog.templates(for: backend.kind)
                var message = "template \"\(template)\" cannot be sent to \(backend.kind.rawValue) backend \"\(backend.name)\""
                if let s = Suggestion.closest(to: template, in: options), s != template {
                    message = "unknown template \"\(template)\"" + Suggestion.didYouMean(template, in: options)
                }
                message += "; it takes: " + options.joined(separator: ", ")
                errors.append(ConfigError(reader["template"]!.location, path: path + ".template", message))
            }
        }

        // Unknown keys: rule keys plus the schema's fields.
        if let schema {
            let allowed = ruleKeys.filter { key in
                switch key {
                case "status": return backend?.kind == .islandpulse
                case "dismiss_after": return backend?.kind == .homeassistant
                case "slug", "job_id", "tag": return backend?.kind.idKey == key
                default: return true
                }
            } + schema.names
            reader.rejectUnknown(allowed: allowed, errors: &errors)
        }

        // active_when.
        var activeWhen: Template?
        if let node = reader["active_when"], let text = node.scalar {
            do { activeWhen = try Template(text) } catch {
                errors.append(ConfigError(FieldCompiler.location(of: error.offset, in: node), path: path + ".active_when", "template error: \(error.message)"))
            }
        } else {
            errors.append(ConfigError(node.location, path: path + ".active_when", "is required, e.g. \"{{ is_state('sensor.washer', 'running') }}\""))
        }

        // Fields.
        var compiler = FieldCompiler()
        var fields: FieldTree?
        var onEnd: FieldTree?
        var status: FieldTree?
        if let schema {
            fields = compileFields(reader, schema: schema, path: path, compiler: &compiler, node: node)
            if let endNode = reader["on_end"] {
                onEnd = compiler.compile(endNode, as: .object(schema.allOptional), path: path + ".on_end")
            }
            if let statusNode = reader["status"] {
                status = compiler.compile(statusNode, as: .choice(name: "status", IslandPulseSchema.statuses), path: path + ".status")
            }
        }
        errors += compiler.errors
        if backend?.kind == .islandpulse, mapping == .native, let template {
            checkLengths(reader, layout: template, path: path, errors: &errors)
        }

        // Target id.
        let idKey = backend?.kind.idKey ?? "slug"
        let targetID = reader.string(idKey, errors: &errors) ?? id
        if backend?.kind == .islandpulse, let problem = IslandPulseSchema.jobIDProblem(targetID) {
            errors.append(ConfigError(reader[idKey]?.location ?? node.location, path: path + "." + idKey, problem))
        }
        if backend?.kind == .homeassistant, targetID.count > 64 {
            errors.append(ConfigError(reader[idKey]?.location ?? node.location, path: path + ".tag", "\"\(targetID)\" is longer than 64 characters"))
        }
        if backend?.kind == .aivi, targetID.isEmpty || targetID.contains("/") || targetID.contains(" ") {
            errors.append(ConfigError(reader[idKey]?.location ?? node.location, path: path + ".slug", "\"\(targetID)\" is not a slug"))
        }

        let budget = RulesLoader.decodeBudget(reader, base: defaults, errors: &errors)
        let mainEntity = reader.string("entity", errors: &errors)
        let dismissAfter = reader.duration("dismiss_after", errors: &errors) ?? ActivityRule.defaultDismissAfter
        guard errors.count == before, let backend, let template, let activeWhen, let fields else { return nil }
        return ActivityRule(id: id, backend: backend, template: template, targetID: targetID, activeWhen: activeWhen,
                            fields: fields, onEnd: onEnd, status: status, budget: budget, location: node.location,
                            mapping: mapping, mainEntity: mainEntity, dismissAfter: dismissAfter)
    }

    /// Island Pulse's per-layout limits on fixed text, at its line and column.
    static func checkLengths(_ reader: MappingReader, layout: String, path: String, errors: inout [ConfigError]) {
        for (field, limit) in (IslandPulseSchema.limits[layout] ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let node = reader[field], let text = node.scalar, !FieldCompiler.isTemplate(text), text.count > limit else { continue }
            errors.append(ConfigError(node.location, path: joinedPath(path, field), "\(node.quoted) is \(text.count) characters; the \(layout) layout shows at most \(limit)"))
        }
    }

    /// The payload fields of the rule: every key that is not a rule key, checked against the template's schema.
    static func compileFields(_ reader: MappingReader, schema: ObjectSchema, path: String, compiler: inout FieldCompiler,
                              node: YAMLNode) -> FieldTree? {
        var fields: [(String, FieldTree)] = []
        var ok = true
        for (key, value) in reader.pairs {
            guard let name = key.scalar, !ruleKeys.contains(name), let field = schema.field(name) else { continue }
            if value.isNull { continue }
            if let tree = compiler.compile(value, as: field.schema, path: joinedPath(path, name)) { fields.append((name, tree)) } else { ok = false }
        }
        for field in schema.fields where field.required && reader[field.name] == nil {
            compiler.errors.append(ConfigError(node.location, path: joinedPath(path, field.name), "is required"))
            ok = false
        }
        return ok ? .object(fields) : nil
    }

    static func resolve(template: String, backend: BackendKind, reader: MappingReader) -> (ObjectSchema?, PayloadMapping) {
        switch (backend, template) {
        case (.islandpulse, "progress"):
            // Aivi's progress has a progress bar mapping ({style: …}); Island Pulse's progress layout a number.
            if case .mapping? = reader["progress"]?.kind { return (TemplateCatalog.aivi("progress"), .aiviToIslandPulse("progress")) }
            return (TemplateCatalog.islandPulseFields, .native)
        case (.islandpulse, "monitor"), (.islandpulse, "generic"):
            return (TemplateCatalog.aivi(template), .aiviToIslandPulse(template))
        case (.homeassistant, "progress"), (.homeassistant, "generic"):
            return (TemplateCatalog.aivi(template), .aiviToLiveUpdate(template))
        default:
            return (TemplateCatalog.schema(template: template, backend: backend), .native)
        }
    }
}

/// How a rule's fields become its backend's payload.
enum PayloadMapping: Sendable, Equatable {
    case native
    /// An Aivi template shown on Island Pulse (monitor → sports, progress/generic → progress).
    case aiviToIslandPulse(String)
    /// An Aivi template shown as a Home Assistant live update.
    case aiviToLiveUpdate(String)
}
