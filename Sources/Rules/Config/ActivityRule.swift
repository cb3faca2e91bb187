public import HomeAssistant
public import LiveActivity
public import Templates

/// One activity: when it runs, where it is shown (one target or several: phones and services), and how each field is
/// computed. A class of constants: the
/// engine, its reader index and every evaluation share one instance instead of copying a dozen fields per change.
public final class ActivityRule: Sendable {
    public let id: String
    /// Where it is shown, in the order written; never empty.
    public let targets: [ActivityTarget]
    /// The template the rule is written in: an Aivi template, an Island Pulse layout, `live_update`, a PushWard template or an ActivitySmith stream type.
    public let template: String
    public let activeWhen: Template
    let fields: FieldTree
    let onEnd: FieldTree?
    /// Island Pulse status, a constant or a template.
    let status: FieldTree?
    /// Whether it has a status (whose turn to `failed` is urgent: `ActivityRenderer.isUrgent`).
    public var hasStatus: Bool { status != nil }
    public let budget: UpdateBudget
    public let location: SourceLocation
    /// The entity `icon: auto` looks at; else the first entity `active_when` reads.
    public let mainEntity: String?
    /// How long the end's final content stays before it is cleared (Home Assistant's `clear_notification`,
    /// PushWard's `ended`); nil: the backend's default (`dismissAfter(for:)`).
    public let writtenDismissAfter: Duration?
    /// Each service's options of the rule, by kind, as its rendering decoded them (PushWard's priority, sound…).
    let options: [BackendKind: any Sendable]

    /// The end's final content time at a backend of `kind`: as written, else the backend's (five minutes on Home
    /// Assistant, five seconds on PushWard: `BackendDefinition.defaultDismissAfter`).
    public func dismissAfter(for kind: BackendKind) -> Duration {
        writtenDismissAfter ?? kind.definition.defaultDismissAfter
    }

    /// Every entity, domain (`states.light`) or all (`expand`) the rule's templates read, found once at load.
    public let reads: EntitySelection

    /// Whether a template of it reads the time (`now()`…): evaluated again each minute, as Home Assistant renders them.
    public let readsTime: Bool

    init(id: String, targets: [ActivityTarget], template: String, activeWhen: Template, fields: FieldTree,
         onEnd: FieldTree?, status: FieldTree?, budget: UpdateBudget, location: SourceLocation,
         mainEntity: String?, dismissAfter: Duration?, options: [BackendKind: any Sendable]) {
        self.id = id
        self.targets = targets
        self.template = template
        self.activeWhen = activeWhen
        self.fields = fields
        self.onEnd = onEnd
        self.status = status
        self.budget = budget
        self.location = location
        self.mainEntity = mainEntity
        self.writtenDismissAfter = dismissAfter
        self.options = options
        // What the rule reads, found once: every template's reads together (the subscription, the reader index).
        let templates = [activeWhen] + fields.templates + (status?.templates ?? [])
        reads = .combining((templates + (onEnd?.templates ?? [])).map(\.reads))
        // The end's content is rendered once, at the end: it needs no render each minute.
        readsTime = templates.contains(where: \.readsTime)
    }

    /// The target of this name (a lane's name).
    public func target(named name: String) -> ActivityTarget? { targets.first { $0.name == name } }

    /// The templates of the payload fields (not active_when), for measuring evaluation.
    public var fieldTemplates: [Template] { fields.templates }

    /// The entities its templates name (not the domains or everything they iterate: see `reads`).
    public var entityIDs: Set<String> { Set(reads.entityIDs) }

    /// A field whose template Home Assistant renders (it uses what only Home Assistant computes).
    public struct HomeAssistantField: Sendable {
        /// The field's path: `activities.washer.active_when`, `activities.washer.state`…
        public let path: String
        public let location: SourceLocation
        public let reason: String
        public let template: Template
    }

    /// The fields Home Assistant renders, in the order written.
    public var fieldsRenderedByHomeAssistant: [HomeAssistantField] {
        var all: [(path: String, location: SourceLocation, template: Template)] = [("activities.\(id).active_when", location, activeWhen)]
        all += fields.templateFields
        if let onEnd { all += onEnd.templateFields }
        if let status { all += status.templateFields }
        return all.compactMap { field in
            field.template.renderedByHomeAssistant.map { HomeAssistantField(path: field.path, location: field.location, reason: $0, template: field.template) }
        }
    }
}
