import Dispatcher
import HomeAssistant
import JSON
import LiveActivity
import Rules

/// Turns entity changes into lifecycle events: keeps the states the rules read, re-evaluates only the activities that
/// read a changed entity, and finds the edges of `active_when` (rising → start, falling → end). Pure: no I/O.
///
/// Starts and ends are rendered at their edge. A change to an active activity is only marked (`.changed`): its
/// payload is rendered by `payload(activity:kind:now:)` when the dispatcher's budget lets the update go.
public struct ActivityEngine: Sendable {
    /// One thing for the dispatcher to do.
    public typealias Command = Dispatcher.Submission

    public private(set) var rules: RulesFile
    public private(set) var states: [String: EntityState] = [:]
    private var readers = ReaderIndex([])
    private var byID: [String: ActivityRule] = [:]
    private var active: [String: Bool] = [:]
    private var lastRequest: [String: BackendRequest] = [:]
    private var problems = ProblemReport()
    /// Home Assistant's latest result for each template only it renders, by the template's text.
    private var rendered: [String: Result<TemplateValue, EvaluationError>] = [:]
    /// The activities using each of those templates.
    private var renderedReaders: [String: [String]] = [:]

    /// `running`: activities the dispatcher says are on a phone (after a restart), so a false condition ends them.
    public init(rules: RulesFile, running: Set<String> = []) {
        self.rules = rules
        index()
        for id in running { active[id] = true }
    }

    private mutating func index() {
        readers = ReaderIndex(rules.activities)
        byID = [:]
        renderedReaders = [:]
        for rule in rules.activities {
            byID[rule.id] = rule
            for source in Set(rule.fieldsRenderedByHomeAssistant.map(\.template.source)) { renderedReaders[source, default: []].append(rule.id) }
        }
    }

    /// Takes in Home Assistant's new rendering of a template only it renders; returns the activities that use it.
    public mutating func apply(_ rendering: TemplateRendering, of template: String) -> [String] {
        switch rendering {
        case .result(let value): rendered[template] = .success(TemplateValue(value))
        case .failure(let message): rendered[template] = .failure(EvaluationError("Home Assistant could not render it: \(message)"))
        }
        return renderedReaders[template] ?? []
    }

    /// Swaps in reloaded rules: removed activities end, the others go on with the new fields.
    public mutating func reload(_ newRules: RulesFile, now: Double) -> (commands: [Command], problems: [String]) {
        var commands: [Command] = []
        let kept = Set(newRules.activities.map(\.id))
        for rule in rules.activities where !kept.contains(rule.id) && active[rule.id] == true {
            var ignored: [PayloadIssue] = []
            if let end = endRequest(rule, now: now, notes: &ignored) {
                commands.append(Command(activity: rule.id, backend: rule.backend.name, budget: Self.budget(rule), event: .end(end)))
            }
            active[rule.id] = nil
        }
        rules = newRules
        index()
        let (more, found) = evaluate(ids: newRules.activities.map(\.id), now: now)
        return (commands + more, found)
    }

    /// Takes in changes; returns the ids of the activities that read any of them.
    public mutating func apply(_ changes: [EntityChange]) -> [String] {
        var touched: [String] = []
        var seen = Set<String>()
        for change in changes {
            switch change {
            case .updated(let state): states[state.entityID] = state
            case .removed(let id): states[id] = nil
            }
            readers.forEachReader(of: change.entityID) { id in
                if seen.insert(id).inserted { touched.append(id) }
            }
        }
        return touched
    }

    /// Evaluates these activities now; returns what to dispatch and problems not reported before.
    public mutating func evaluate(ids: [String], now: Double) -> (commands: [Command], problems: [String]) {
        var commands: [Command] = []
        var found: [String] = []
        let context = EvaluationContext(states: states, now: now, renderedByHomeAssistant: rendered)
        for id in ids {
            guard let rule = byID[id] else { continue }
            var issues: [PayloadIssue] = []
            defer { found += problems.newProblems(activity: id, issues).map { "activity \(id): \($0)" } }
            let isActive: Bool
            switch ActivityRenderer.isActive(rule, in: context) {
            case .success(let value): isActive = value
            case .failure(let error):
                issues.append(PayloadIssue(path: "active_when", error.message))
                continue
            }
            let was = active[id] ?? false
            active[id] = isActive
            let budget = Self.budget(rule)
            switch (was, isActive) {
            case (false, false):
                continue
            case (true, false):
                if let end = endRequest(rule, now: now, notes: &issues) {
                    commands.append(Command(activity: id, backend: rule.backend.name, budget: budget, event: .end(end)))
                }
                lastRequest[id] = nil
            case (true, true):
                // Only what decides urgency is evaluated now: an Island Pulse status turning to failed.
                let urgent = ActivityRenderer.isUrgent(rule, in: context)
                commands.append(Command(activity: id, backend: rule.backend.name, budget: budget, event: .changed(urgent: urgent)))
            case (false, true):
                switch ActivityRenderer.render(rule, phase: .start, in: context, notes: &issues) {
                case .failure(let failure):
                    issues += failure.issues
                    if !was { active[id] = false }  // not started: try again on the next change
                case .success(let request):
                    lastRequest[id] = request
                    commands.append(Command(activity: id, backend: rule.backend.name, budget: budget, event: .start(request)))
                }
            }
        }
        return (commands, found)
    }

    /// The payload of an active activity, rendered now from the newest states, when the dispatcher is about to send
    /// it; nil (with its problems) when it cannot be rendered or the activity is no longer active.
    public mutating func payload(activity id: String, kind: Push.Kind, now: Double) -> (request: BackendRequest?, problems: [String]) {
        guard let rule = byID[id], active[id] == true else { return (nil, []) }
        var issues: [PayloadIssue] = []
        let context = EvaluationContext(states: states, now: now, renderedByHomeAssistant: rendered)
        let result = ActivityRenderer.render(rule, phase: kind == .start ? .start : .update, in: context, notes: &issues)
        var request: BackendRequest?
        switch result {
        case .success(let rendered):
            request = rendered
            lastRequest[id] = rendered
        case .failure(let failure):
            issues += failure.issues
        }
        return (request, problems.newProblems(activity: id, issues).map { "activity \(id): \($0)" })
    }

    /// The end push: the rendered end, or when its fields cannot be rendered a minimal one (`ActivityRenderer.end`).
    private func endRequest(_ rule: ActivityRule, now: Double, notes: inout [PayloadIssue]) -> BackendRequest? {
        ActivityRenderer.end(rule, in: EvaluationContext(states: states, now: now, renderedByHomeAssistant: rendered), last: lastRequest[rule.id], notes: &notes)
    }

    static func budget(_ rule: ActivityRule) -> UpdateBudget {
        UpdateBudget(debounce: rule.budget.debounce, maxWait: rule.budget.maxWait, minInterval: rule.budget.minInterval)
    }
}
