import Platform
import LiveActivity
import Templates

/// Decodes one entry of `activities:` into an `ActivityRule`.
enum ActivityDecoder {
    /// Keys of a rule that are not payload fields.
    static let ruleKeys = ["backend", "template", "active_when", "on_end", "status", "slug", "job_id", "tag",
                           "debounce", "max_wait", "min_interval", "max_updates_per_hour", "min_change", "start_settle", "renew_after",
                           "entity", "dismiss_after", "priority", "sound", "stale_ttl", "ended_ttl", "dismissal_ttl", "stream_key"]

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
                       budget defaults: UpdateBudget, errors: inout [ConfigError], notes: inout RuleNotes) -> ActivityRule? {
        let path = "activities." + id
        guard let reader = MappingReader(node, path: path, errors: &errors) else { return nil }
        let before = errors.count

        // Backends: one name or a list of them (several phones and services).
        var chosen: [RulesFile.Backend] = []
        if reader["backend"] != nil {
            for (name, at) in reader.strings("backend", errors: &errors) ?? [] {
                if let backend = backends[name] {
                    if chosen.contains(where: { $0.name == name }) {
                        errors.append(ConfigError(at, path: path + ".backend", "backend \"\(name)\" is named twice"))
                    } else {
                        chosen.append(backend)
                    }
                } else {
                    errors.append(ConfigError(at, path: path + ".backend", RulesLoader.unknownBackend(name, backends)))
                }
            }
        } else if let name = defaultBackend, let backend = backends[name] {
            chosen = [backend]
        } else {
            errors.append(ConfigError(node.location, path: path + ".backend", backends.isEmpty
                ? "no backend: declare one under backends:" : "is required when defaults.backend is not set"))
        }
        let kinds = Set(chosen.map(\.kind))

        // Template and its schema: one set of fields for every target.
        let template = reader.string("template", errors: &errors)
        if template == nil {
            // A misspelt `template:` is the likelier mistake: said at the misspelling, with the fix.
            if let (name, key) = reader.pairs.lazy.compactMap({ pair in pair.key.scalar.map { ($0, pair.key) } })
                .first(where: { $0.0 != "template" && Suggestion.closest(to: $0.0, in: ["template"]) != nil }) {
                errors.append(ConfigError(key.location, path: joinedPath(path, name), "unknown key \"\(name)\" (did you mean \"template\"?)"))
            } else {
                errors.append(ConfigError(node.location, path: path + ".template", "is required"))
            }
        }
        var schema: ObjectSchema?
        var mappings: [String: PayloadMapping] = [:]
        if let template {
            var first: (backend: RulesFile.Backend, schema: ObjectSchema)?
            for backend in chosen {
                let (found, mapping) = backend.kind.rendering.resolve(template: template, reader: reader, others: kinds.subtracting([backend.kind]))
                guard let found else {
                    let options = TemplateCatalog.templates(for: backend.kind)
                    var message = "template \"\(template)\" cannot be sent to \(backend.kind.rawValue) backend \"\(backend.name)\""
                    if let s = Suggestion.closest(to: template, in: options), s != template, !chosen.contains(where: { TemplateCatalog.templates(for: $0.kind).contains(template) }) {
                        message = "unknown template \"\(template)\"" + Suggestion.didYouMean(template, in: options)
                    }
                    message += "; it takes: " + options.joined(separator: ", ")
                    errors.append(ConfigError(reader["template"]!.location, path: path + ".template", message))
                    continue
                }
                mappings[backend.name] = mapping
                if let first {
                    if first.schema.names != found.names {
                        errors.append(ConfigError(reader["template"]!.location, path: path + ".template",
                            "template \"\(template)\" has different fields on \(first.backend.kind.rawValue) backend \"\(first.backend.name)\" and \(backend.kind.rawValue) backend \"\(backend.name)\"; "
                            + "write the activity in an Aivi template (generic, progress) that both show, or give each its own activity"))
                    }
                } else {
                    first = (backend, found)
                    schema = found
                }
            }
            if mappings.count != chosen.count { schema = nil }
        }

        // Unknown keys: rule keys plus the schema's fields.
        if let schema {
            // A key only some services take is allowed when one of the rule's does; an id key when one names ids so.
            let someTake = Set(BackendKind.allCases.flatMap { $0.rendering.ruleKeys })
            let idKeys = Set(BackendKind.allCases.map(\.idKey))
            let allowed = ruleKeys.filter { key in
                if someTake.contains(key) { return kinds.contains { $0.rendering.ruleKeys.contains(key) } }
                if idKeys.contains(key) { return kinds.contains { $0.idKey == key } }
                return true
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
        let statuses = chosen.lazy.compactMap { $0.kind.rendering.statuses }.first
        var fields: FieldTree?
        var onEnd: FieldTree?
        var status: FieldTree?
        if let schema {
            fields = compileFields(reader, schema: schema, path: path, compiler: &compiler, node: node)
            if let endNode = reader["on_end"] {
                // A service with statuses (Island Pulse's) lets the end say how the job finished (success, failed).
                var endSchema = schema.allOptional
                if let statuses, !endSchema.names.contains("status") {
                    endSchema = ObjectSchema(endSchema.fields + [optional("status", .choice(name: "status", statuses))],
                                             shorthand: endSchema.shorthand, checks: endSchema.checks)
                }
                onEnd = compiler.compile(endNode, as: .object(endSchema), path: path + ".on_end")
            }
            if let statusNode = reader["status"], let statuses {
                status = compiler.compile(statusNode, as: .choice(name: "status", statuses), path: path + ".status")
            }
        }
        errors += compiler.errors
        if let template {
            for backend in chosen { backend.kind.rendering.check(reader, template: template, mapping: mappings[backend.name] ?? .native, path: path, errors: &errors) }
        }

        // The id at each kind of backend: slug, job_id, tag (the activity's id unless written).
        var ids: [BackendKind: String] = [:]
        for kind in BackendKind.allCases where kinds.contains(kind) {
            let idKey = kind.idKey
            let targetID = reader.string(idKey, errors: &errors) ?? id
            ids[kind] = targetID
            let at = reader[idKey]?.location ?? node.location
            if let problem = kind.idProblem(targetID) { errors.append(ConfigError(at, path: path + "." + idKey, problem)) }
        }

        var budget = RulesLoader.decodeBudget(reader, base: defaults, errors: &errors)
        if let node = reader["min_change"] { budget.minChange = decodeMinChange(node, path: path + ".min_change", errors: &errors) }
        let mainEntity = reader.string("entity", errors: &errors)
        let dismissAfter = reader.duration("dismiss_after", errors: &errors)
        var options: [BackendKind: any Sendable] = [:]
        for kind in BackendKind.allCases where kinds.contains(kind) {
            options[kind] = kind.rendering.ruleOptions(reader, path: path, errors: &errors)
        }
        guard errors.count == before, !chosen.isEmpty, let template, let activeWhen, let fields else { return nil }
        let targets = chosen.flatMap { backend in
            // One target per notify service a backend names (Home Assistant's phones), else one.
            let services: [String?] = backend.services.isEmpty ? [nil] : backend.services
            return services.map { ActivityTarget(backend: backend, service: $0, id: ids[backend.kind] ?? id, mapping: mappings[backend.name] ?? .native,
                                          budget: budget) }
        }
        // A Home Assistant backend whose services are all wrong has none: its errors are reported where it is declared.
        guard !targets.isEmpty else { return nil }
        let rule = ActivityRule(id: id, targets: targets, template: template, activeWhen: activeWhen,
                                fields: fields, onEnd: onEnd, status: status, budget: budget, location: node.location,
                                mainEntity: mainEntity, dismissAfter: dismissAfter, options: options)
        notes.formUnion(RuleNotes.of(rule, reader, path: path))
        return rule
    }

    /// `min_change`: a progress delta (`0.05`), an ETA drift (`3m`), or both (`{progress: 0.05, eta: 3m}`). What is not
    /// given does not hold an update back.
    static func decodeMinChange(_ node: YAMLNode, path: String, errors: inout [ConfigError]) -> MinChange? {
        var change = MinChange(progress: 0, eta: .zero)
        func progress(_ node: YAMLNode, at path: String) -> Double? {
            guard let text = node.scalar, let value = Double(text), value.isFinite, value > 0, value <= 1 else {
                errors.append(ConfigError(node.location, path: path, "\(node.quoted) is not a progress delta; write a fraction above 0 and at most 1, e.g. 0.05"))
                return nil
            }
            return value
        }
        if case .mapping = node.kind {
            guard let reader = MappingReader(node, path: path, errors: &errors) else { return nil }
            reader.rejectUnknown(allowed: ["progress", "eta"], errors: &errors)
            if let value = reader["progress"] { change.progress = progress(value, at: path + ".progress") ?? change.progress }
            if let eta = reader.duration("eta", errors: &errors) { change.eta = eta }
            return change
        }
        if let text = node.scalar, Double(text) != nil {
            change.progress = progress(node, at: path) ?? change.progress
            return change
        }
        switch ConfigDuration.parse(node) {
        case .success(let eta): change.eta = eta
        case .failure:
            errors.append(ConfigError(node.location, path: path, "\(node.quoted) is neither a progress delta (0.05) nor an ETA drift (3m); write one, or {progress: 0.05, eta: 3m}"))
        }
        return change
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
        guard ok else { return nil }
        compiler.checkFixed(fields, schema, at: node, path: path, locate: { reader[$0]?.location })
        return .object(fields)
    }
}
