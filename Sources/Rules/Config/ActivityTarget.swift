public import LiveActivity

/// One place an activity is shown: a backend (and, for a Home Assistant backend naming several phones, one of its
/// notify services) with the activity's id there. Each target is its own lane at the dispatcher: its own lifecycle,
/// budget, retries and entry in `state.json`.
public struct ActivityTarget: Sendable, Equatable {
    public let backend: RulesFile.Backend
    /// Home Assistant: the notify service this target calls.
    public let service: String?
    /// Slug, job_id or tag at the backend.
    public let id: String
    /// How the rule's fields become this backend's payload.
    let mapping: PayloadMapping
    /// The rule's budget as this backend spends it (Home Assistant's settle after a start).
    public let budget: UpdateBudget
    /// The lane's name, in logs, `/activities` and `state.json`: the backend's name, or `backend/notify.…` for one of
    /// a Home Assistant backend's several services.
    public let name: String
    /// How rules reach its service, looked up once (every render uses it).
    let rendering: any BackendRendering
    /// The phone whose Home Assistant push relay this target's pushes spend (its notify service); nil for services
    /// that do not go through the relay. Found once: every command the engine makes carries it.
    public let relayDevice: String?

    init(backend: RulesFile.Backend, service: String?, id: String, mapping: PayloadMapping, budget: UpdateBudget) {
        self.backend = backend
        self.service = service
        self.id = id
        self.mapping = mapping
        self.budget = budget.settled(for: backend.kind)
        rendering = backend.kind.rendering
        relayDevice = backend.kind.definition.spendsRelay ? service : nil
        if let service, backend.services.count > 1 {
            name = backend.name + "/" + service
        } else {
            name = backend.name
        }
    }

    public var kind: BackendKind { backend.kind }

    public static func == (a: ActivityTarget, b: ActivityTarget) -> Bool {
        a.name == b.name && a.id == b.id && a.service == b.service && a.mapping == b.mapping && a.budget == b.budget
            && a.backend.isSame(as: b.backend)
    }
}
