import LiveActivity

/// Which templates each backend takes, and the fields a rule may give for each.
///
/// A rule is written in its backend's own vocabulary (Aivi templates, Island Pulse layouts, `live_update`), or in an
/// Aivi template that maps naturally onto the backend: monitor → sports and progress/generic → progress on
/// Island Pulse; progress/generic → a live update on Home Assistant.
enum TemplateCatalog {
    /// The rule-level schema: the payload's fields less those LiveBridge fills in itself.
    static func schema(template: String, backend: BackendKind) -> ObjectSchema? { backend.rendering.schema(template: template) }

    static func aivi(_ template: String) -> ObjectSchema? {
        switch template {
        case "generic": return AiviSchema.generic.removing(["template"])
        case "monitor": return AiviSchema.monitor.removing(["template"])
        case "progress": return AiviSchema.progress.removing(["template"])
        default: return nil
        }
    }

    static func templates(for backend: BackendKind) -> [String] { backend.definition.templates }
}

extension ObjectSchema {
    /// The schema less the fields LiveBridge fills in. `keepingChecks`: its checks across fields still hold without
    /// those fields (a PushWard template's start before its end), so they run at load too.
    func removing(_ names: Set<String>, keepingChecks: Bool = false) -> ObjectSchema {
        ObjectSchema(fields.filter { !names.contains($0.name) }, shorthand: shorthand, checks: keepingChecks ? checks : [])
    }

    /// Every field optional: the shape of `on_end` overrides.
    var allOptional: ObjectSchema {
        ObjectSchema(fields.map { optional($0.name, $0.schema) }, shorthand: shorthand, checks: [])
    }
}
