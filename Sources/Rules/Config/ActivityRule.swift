import HomeAssistant
import JSON
import LiveActivity

/// One activity: when it runs, where it is shown (one target or several: phones and services), and how each field is
/// computed. A class of constants: the
/// engine, its reader index and every evaluation share one instance instead of copying a dozen fields per change.
public final class ActivityRule: Sendable {
    public let id: String
    /// Where it is shown, in the order written; never empty.
    public let targets: [ActivityTarget]
    /// The template the rule is written in: an Aivi template, an Island Pulse layout or `live_update`.
    public let template: String
    public let activeWhen: Template
    let fields: FieldTree
    let onEnd: FieldTree?
    /// Island Pulse status, a constant or a template.
    let status: FieldTree?
    public let budget: UpdateBudget
    public let location: SourceLocation
    /// The entity `icon: auto` looks at; else the first entity `active_when` reads.
    public let mainEntity: String?
    /// Home Assistant: how long the end's final content stays on the phone before `clear_notification` (0: cleared
    /// at once, no final content).
    public let dismissAfter: Duration

    /// Whether a template of it reads the time (`now()`…): evaluated again each minute, as Home Assistant renders them.
    public let readsTime: Bool

    /// Long enough to read "Done" on the Lock Screen, short enough not to linger: five minutes.
    public static let defaultDismissAfter = Duration.seconds(300)

    init(id: String, targets: [ActivityTarget], template: String, activeWhen: Template, fields: FieldTree,
         onEnd: FieldTree?, status: FieldTree?, budget: UpdateBudget, location: SourceLocation,
         mainEntity: String?, dismissAfter: Duration) {
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
        self.dismissAfter = dismissAfter
        readsTime = ([activeWhen] + fields.templates + (status?.templates ?? [])).contains(where: \.readsTime)
    }

    /// The target of this name (a lane's name).
    public func target(named name: String) -> ActivityTarget? { targets.first { $0.name == name } }

    /// The templates of the payload fields (not active_when), for measuring evaluation.
    public var fieldTemplates: [Template] { fields.templates }

    public var entityIDs: Set<String> {
        var ids = activeWhen.entityIDs.union(fields.entityIDs)
        if let onEnd { ids.formUnion(onEnd.entityIDs) }
        if let status { ids.formUnion(status.entityIDs) }
        return ids
    }

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

    /// Every entity, domain (`states.light`) or all (`expand`) the rule's templates read.
    public var reads: EntitySelection {
        .combining([activeWhen.reads, fields.reads] + [onEnd, status].compactMap { $0?.reads })
    }
}
