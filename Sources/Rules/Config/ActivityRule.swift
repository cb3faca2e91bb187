import HomeAssistant
import JSON
import LiveActivity

/// One activity: when it runs, which backend shows it, and how each field is computed.
public struct ActivityRule: Sendable {
    public let id: String
    public let backend: RulesFile.Backend
    /// The template the rule is written in: an Aivi template, an Island Pulse layout or `live_update`.
    public let template: String
    /// Slug, job_id or tag at the backend.
    public let targetID: String
    public let activeWhen: Template
    let fields: FieldTree
    let onEnd: FieldTree?
    /// Island Pulse status, a constant or a template.
    let status: FieldTree?
    public let budget: RulesFile.Budget
    public let location: SourceLocation
    let mapping: PayloadMapping
    /// The entity `icon: auto` looks at; else the first entity `active_when` reads.
    public let mainEntity: String?

    /// The templates of the payload fields (not active_when), for measuring evaluation.
    public var fieldTemplates: [Template] { fields.templates }

    public var entityIDs: Set<String> {
        var ids = activeWhen.entityIDs.union(fields.entityIDs)
        if let onEnd { ids.formUnion(onEnd.entityIDs) }
        if let status { ids.formUnion(status.entityIDs) }
        return ids
    }

    /// Every entity, domain (`states.light`) or all (`expand`) the rule's templates read.
    public var reads: EntitySelection {
        var selection = activeWhen.reads.union(fields.reads)
        if let onEnd { selection = selection.union(onEnd.reads) }
        if let status { selection = selection.union(status.reads) }
        return selection
    }
}
