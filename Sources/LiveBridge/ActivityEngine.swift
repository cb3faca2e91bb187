public import Dispatcher
public import HomeAssistant
public import LiveActivity
public import Rules
public import Templates
public import Platform

/// Turns entity changes into lifecycle events: keeps the states the rules read, re-evaluates only the activities that
/// read a changed entity, and finds the edges of `active_when` (rising → start, falling → end). Pure: no I/O.
///
/// Starts and ends are rendered at their edge, once per target. A change to an active activity is only marked
/// (`.changed`, to each target): its payload is rendered by `payload(activity:target:kind:now:)` when that target's
/// budget lets the update go.
public struct ActivityEngine: Sendable {
    /// One thing for the dispatcher to do.
    public typealias Command = Dispatcher.Submission

    public private(set) var rules: RulesFile
    /// The states the rules read, in Home Assistant's order: the lender's, or the engine's own table.
    public var states: [String: EntityState] { lender?.read().states ?? ownStates }
    /// Where the states are read when the engine keeps none (the daemon: the connection's store, read on the socket's
    /// thread, and changes that carry ids only). Nil: the engine keeps its own table from the changes it takes (the
    /// tools, tests).
    public var lender: StateLender?
    private var ownStates: [String: EntityState] = [:]
    /// Home's location and length unit from Home Assistant's configuration, for `distance()` and `closest()`.
    public var home: HomeLocation?
    /// Each entity's place in Home Assistant's order, as first seen (a snapshot reports new entities in the state
    /// machine's order, later ones come last): templates iterate `states` in it. A place outlives a reconnection.
    private var ownOrder: [String] = []
    private var readers = ReaderIndex([])
    /// Each activity's position in `rules.activities`; the arrays below are by position.
    private var positions: [String: Int] = [:]
    /// What a change's evaluation reads of each activity, together, and the distinct conditions.
    private var facts = ActivityFacts([])
    /// The conditions' values in the context being evaluated.
    private var conditionValues = ActivityFacts.Values()
    /// Whether `active_when` held at the last evaluation.
    private var active: [Bool] = []
    /// How many of the activity's targets were told of a change and have not pulled its payload yet: while all of them
    /// wait, later changes need not be told, as each pull renders from the newest states (unless a debounce must
    /// start again).
    private var awaitingPull: [Int] = []
    /// The batch that last touched each activity, so a batch lists an activity once without building a set.
    private var touchedIn: [UInt32] = []
    private var batch: UInt32 = 0
    /// Counts the indexings of the rules (start, reload): an `Evaluation` from before a reload holds stale positions.
    private var indexGeneration = 0
    /// The last request rendered for each `activity@target`: an end that cannot be rendered is built from it.
    private var lastRequest: [String: BackendRequest] = [:]
    private var problems = ProblemReport()
    /// Until then (seconds since 1970) a falling `active_when` is held, not ended: Home Assistant has just (re)started
    /// or LiveBridge just reconnected, and sensors pass through unavailable, unknown or 0 while integrations load.
    private var holdEndsUntil: Double?
    /// Positions active when the hold began (on the phone from before the reconnection, or restored from the state
    /// file): only their falling edges are held. One that starts from the new states is not at risk.
    private var holdable: Set<Int> = []
    /// Positions whose falling edge is held; `releaseHeldEnds` ends those still false.
    private var held: Set<Int> = []
    /// Counts activities newly held: a consumer saying which are held looks again only when it moved (checked per batch).
    public private(set) var heldInsertions = 0
    /// Targets a reload added to an active activity before the first snapshot, by activity: started at its first
    /// evaluation that finds it still active (the dispatcher has no lane for them, so an update would reach nothing).
    private var startsOwed: [String: Set<String>] = [:]
    /// Positions of the activities whose templates read the time: evaluated again each minute (`tick`).
    private var timeReaders: [Int] = []
    /// Home Assistant's latest result for each template only it renders, by the template's text.
    private var rendered: [String: Result<TemplateValue, EvaluationError>] = [:]
    /// The activities using each of those templates.
    private var renderedReaders: [String: [String]] = [:]

    /// `running`: activities the dispatcher says are on a phone (after a restart), so a false condition ends them.
    public init(rules: RulesFile, running: Set<String> = [], lender: StateLender? = nil) {
        self.rules = rules
        self.lender = lender
        index(active: running)
    }

    /// Lends the states and their order for the length of one evaluation: held only while it runs, so the lender's
    /// own copy stays the only one between evaluations.
    public struct StateLender: Sendable {
        /// The states and their order now.
        public let read: @Sendable () -> (states: [String: EntityState], order: [String])

        public init(read: @escaping @Sendable () -> (states: [String: EntityState], order: [String])) { self.read = read }
    }

    /// A context of the states now, in their order.
    private func evaluationContext(now: Double) -> EvaluationContext {
        let (states, order) = lender?.read() ?? (ownStates, ownOrder)
        return EvaluationContext(states: states, order: order, now: now, renderedByHomeAssistant: rendered, home: home)
    }

    /// Indexes the rules; `ids` are the activities active now.
    private mutating func index(active ids: Set<String>) {
        indexGeneration &+= 1
        let activities = rules.activities
        readers = ReaderIndex(activities)
        positions = Dictionary(activities.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        facts = ActivityFacts(activities)
        active = activities.map { ids.contains($0.id) }
        awaitingPull = Array(repeating: 0, count: activities.count)
        touchedIn = Array(repeating: 0, count: activities.count)
        renderedReaders = [:]
        timeReaders = activities.indices.filter { activities[$0].readsTime }
        for rule in activities {
            for source in Set(rule.fieldsRenderedByHomeAssistant.map(\.template.source)) { renderedReaders[source, default: []].append(rule.id) }
        }
    }

    /// Whether any activity reads the time: the service then calls `tick` each minute.
    public var readsTime: Bool { !timeReaders.isEmpty }

    /// A new minute: the activities whose templates read the time are evaluated again (a countdown's bar empties, a
    /// condition on the time of day turns), as Home Assistant renders such templates each minute.
    /// `statesKnown` false (no snapshot taken yet): only the activities reading no entity, which need no states.
    public mutating func tick(now: Double, statesKnown: Bool = true) -> (commands: [Command], problems: [String]) {
        evaluate(positions: statesKnown ? timeReaders : timeReaders.filter {
            rules.activities[$0].reads == .nothing && rules.activities[$0].activeWhen.renderedByHomeAssistant == nil
        }, now: now)
    }

    /// Takes in Home Assistant's new rendering of a template only it renders; returns the activities that use it.
    public mutating func apply(_ rendering: TemplateRendering, of template: String) -> [String] {
        switch rendering {
        case .result(let value, let text): rendered[template] = .success(TemplateValue(homeAssistantResult: value, text: text))
        case .failure(let message): rendered[template] = .failure(EvaluationError("Home Assistant could not render it: \(message)"))
        }
        return renderedReaders[template] ?? []
    }

    /// Home Assistant's states are fresh from a (re)connection: until `until`, an activity active now whose condition
    /// turns false stays on the phone (no end, no update); `releaseHeldEnds` decides afterwards.
    public mutating func holdEnds(until: Double) {
        holdEndsUntil = max(holdEndsUntil ?? until, until)
        holdable.formUnion(active.indices.filter { active[$0] })
    }

    /// The activities whose end is held.
    public var heldActivities: [String] { held.sorted().map { rules.activities[$0].id } }

    /// The hold is over (`now` past it, or `graceOver`: the service's timer, on the monotonic clock, says so whatever
    /// the wall clock did meanwhile): an activity whose condition is still false ends now; one that came back goes on
    /// with an update from the newest states.
    public mutating func releaseHeldEnds(now: Double, graceOver: Bool = false) -> (commands: [Command], problems: [String]) {
        guard let until = holdEndsUntil, graceOver || now >= until else { return ([], []) }
        holdEndsUntil = nil
        let positions = held.sorted()
        held = []
        holdable = []
        return evaluate(positions: positions, now: now)
    }

    /// Swaps in reloaded rules: removed activities end, the others go on with the new fields. A target removed from
    /// an active activity ends there only; one added starts there only.
    /// `statesKnown` false (no snapshot taken yet): activities removed, or targets taken from them, end; the rest wait
    /// for the first snapshot's evaluation (with no states every condition reading an entity is false, and an activity
    /// restored from the state file would be ended).
    public mutating func reload(_ newRules: RulesFile, now: Double, statesKnown: Bool = true) -> (commands: [Command], problems: [String]) {
        var commands: [Command] = []
        let kept = Dictionary(newRules.activities.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var stillActive = Set<String>()
        var added: [String: [ActivityTarget]] = [:]
        for (position, rule) in rules.activities.enumerated() where active[position] {
            var ending = rule.targets
            if let next = kept[rule.id] {
                stillActive.insert(rule.id)
                ending = rule.targets.filter { next.target(named: $0.name) == nil }
                added[rule.id] = next.targets.filter { rule.target(named: $0.name) == nil }
            }
            var ignored: [PayloadIssue] = []
            for target in ending {
                commands.append(command(rule, target, .end(endRequest(rule, target, now: now, notes: &ignored))))
                lastRequest[Self.key(rule.id, target)] = nil
            }
        }
        // A grace in force goes on across the reload: what it holds (or may hold) stays so, by activity.
        let heldIDs = held.map { rules.activities[$0].id }, holdableIDs = holdable.map { rules.activities[$0].id }
        rules = newRules
        index(active: stillActive)
        held = Set(heldIDs.compactMap { positions[$0] })
        holdable = Set(holdableIDs.compactMap { positions[$0] })
        // Starts owed to targets added before the first snapshot, of targets the new rules still have.
        startsOwed = startsOwed.reduce(into: [:]) { owed, entry in
            if let rule = kept[entry.key] { owed[entry.key] = entry.value.filter { rule.target(named: $0) != nil } }
        }
        guard statesKnown else {
            // With no states yet nothing is evaluated: the first snapshot's evaluation starts the added targets.
            for (id, targets) in added where !targets.isEmpty { startsOwed[id, default: []].formUnion(targets.map(\.name)) }
            return (commands, [])
        }
        var (more, found) = evaluate(positions: Array(newRules.activities.indices), now: now)
        // New targets of activities that stay active: a start there (the update `evaluate` gave them finds no lane).
        for (position, rule) in newRules.activities.enumerated() where active[position] {
            guard let targets = added[rule.id], !targets.isEmpty else { continue }
            let names = Set(targets.map(\.name))
            more.removeAll { $0.activity == rule.id && names.contains($0.target) }
            var issues: [PayloadIssue] = []
            let context = evaluationContext(now: now)
            for target in targets {
                switch ActivityRenderer.render(rule, for: target, phase: .start, in: context, notes: &issues) {
                case .failure(let failure): issues += failure.issues
                case .success(let request):
                    lastRequest[Self.key(rule.id, target)] = request
                    more.append(command(rule, target, .start(request)))
                }
            }
            found += problems.newProblems(activity: rule.id, issues).map { "activity \(rule.id): \($0)" }
        }
        return (commands + more, found)
    }

    private func command(_ rule: ActivityRule, _ target: ActivityTarget, _ event: Dispatcher.Event) -> Command {
        Command(activity: rule.id, target: target.name, backend: target.backend.name,
                device: target.relayDevice, budget: target.budget, event: event)
    }

    private static func key(_ activity: String, _ target: ActivityTarget) -> String { activity + "@" + target.name }

    /// Takes in changes; returns the ids of the activities that read any of them.
    public mutating func apply(_ changes: [EntityChange]) -> [String] {
        take(changes).map { rules.activities[$0].id }
    }

    /// Takes in changes and evaluates the activities that read any of them.
    public mutating func evaluate(changes: [EntityChange], now: Double) -> (commands: [Command], problems: [String]) {
        evaluate(positions: take(changes), now: now)
    }

    /// Takes in changes and evaluates every activity (the first snapshot: also those that read no entity).
    public mutating func evaluateAll(taking changes: [EntityChange], now: Double) -> (commands: [Command], problems: [String]) {
        _ = take(changes)
        return evaluate(positions: Array(rules.activities.indices), now: now)
    }

    /// The activities a batch of changes asks to evaluate, evaluated in parts (`continueEvaluating`): its owner can
    /// let other work in between, the socket's reading above all, when templates are slow.
    public struct Evaluation: Sendable {
        fileprivate let positions: [Int]
        fileprivate var done = 0
        /// The rules' indexing it was made under: a reload in between makes the positions meaningless.
        fileprivate let generation: Int
        public var isFinished: Bool { done >= positions.count }
    }

    /// Takes in changes; what is left to evaluate: the activities that read any of them, or every activity (`all`: the
    /// first snapshot, also those that read no entity).
    public mutating func evaluation(taking changes: [EntityChange], all: Bool = false) -> Evaluation {
        let touched = take(changes)
        return Evaluation(positions: all ? Array(rules.activities.indices) : touched, generation: indexGeneration)
    }

    /// Evaluates the next activities of `evaluation` until `deadline` has passed (nil: all of them); at least one. After a reload the rest is dropped: the reload evaluated every activity under the new rules.
    public mutating func continueEvaluating(_ evaluation: inout Evaluation, now: Double,
                                            until deadline: SliceDeadline?) -> (commands: [Command], problems: [String]) {
        guard evaluation.generation == indexGeneration else {
            evaluation.done = evaluation.positions.count
            return ([], [])
        }
        let result = evaluate(positions: evaluation.positions[evaluation.done...], now: now, until: deadline)
        evaluation.done += result.evaluated
        return (result.commands, result.problems)
    }

    /// Evaluates these activities now; returns what to dispatch and problems not reported before.
    public mutating func evaluate(ids: [String], now: Double) -> (commands: [Command], problems: [String]) {
        evaluate(positions: ids.compactMap { positions[$0] }, now: now)
    }

    /// Stores the changes; returns the positions of the activities reading any of them, each once, in first-read order.
    private mutating func take(_ changes: [EntityChange]) -> [Int] {
        batch &+= 1
        if batch == 0 {
            // Wrapped: stamps from 2³² batches ago could look current.
            touchedIn = Array(repeating: 0, count: touchedIn.count)
            batch = 1
        }
        let readers = readers, stamp = batch
        var touchedIn = self.touchedIn
        self.touchedIn = []
        defer { self.touchedIn = touchedIn }
        var touched: [Int] = []
        // Most changes touch one activity: one allocation, not a regrowth every doubling.
        touched.reserveCapacity(min(changes.count, touchedIn.count))
        func touch(_ position: Int) {
            if touchedIn[position] != stamp {
                touchedIn[position] = stamp
                touched.append(position)
            }
        }
        // Read where they stand (an element copied out of the array was a retain and a release of its id, a change).
        changes.withUnsafeBufferPointer { changes in
            for index in changes.indices {
                switch changes[index] {
                case .updated(let state):
                    let id = state.entityID
                    if lender == nil, ownStates.updateValue(state, forKey: id) == nil { ownOrder.append(id) }
                    readers.forEachReader(of: id, touch)
                case .removed(let id):
                    if lender == nil, ownStates.removeValue(forKey: id) != nil, let at = ownOrder.firstIndex(of: id) { ownOrder.remove(at: at) }
                    readers.forEachReader(of: id, touch)
                case .changed(let id):
                    // Its state is the lender's (an engine of its own table never gets one: only a lending connection
                    // sends it).
                    readers.forEachReader(of: id, touch)
                }
            }
        }
        return touched
    }

    private mutating func evaluate(positions: [Int], now: Double) -> (commands: [Command], problems: [String]) {
        let result = evaluate(positions: positions[...], now: now, until: nil)
        return (result.commands, result.problems)
    }

    /// Evaluates activities in order until `deadline` has passed (read after each: one may take 2 s); how many it
    /// evaluated.
    private mutating func evaluate(positions: ArraySlice<Int>, now: Double,
                                   until deadline: SliceDeadline?) -> (commands: [Command], problems: [String], evaluated: Int) {
        var commands: [Command] = []
        var found: [String] = []
        var evaluated = 0
        let context = evaluationContext(now: now)
        conditionValues.begin(facts)
        for position in positions {
            if let deadline, evaluated > 0, deadline.isPast { break }
            evaluated += 1
            // The common path (still active, its targets already told) reads only `facts`, not the rule.
            let fact = facts.facts[position]
            var issues: [PayloadIssue] = []
            defer {
                // Nearly every evaluation has no problem and none on record: nothing to look up then.
                if !issues.isEmpty || problems.count > 0 {
                    let id = rules.activities[position].id
                    found += problems.newProblems(activity: id, issues).map { "activity \(id): \($0)" }
                }
            }
            let isActive: Bool
            switch conditionValues.value(of: fact.condition, in: facts, context: context) {
            case .success(let value): isActive = value
            case .failure(let error):
                issues.append(PayloadIssue(path: "active_when", error.message))
                continue
            }
            let was = active[position]
            active[position] = isActive
            switch (was, isActive) {
            case (false, false):
                continue
            case (true, false):
                let rule = rules.activities[position]
                // Held while a grace is in force: its end is the service's timer's (`releaseHeldEnds`), not the wall
                // clock's, which may step either way meanwhile.
                if holdEndsUntil != nil, holdable.contains(position), looksLikeStartingUp(rule) {
                    // Perhaps only Home Assistant starting: kept until the hold is over.
                    active[position] = true
                    if held.insert(position).inserted { heldInsertions &+= 1 }
                    continue
                }
                if !held.isEmpty { held.remove(position) }
                if !startsOwed.isEmpty { startsOwed[rule.id] = nil }
                for target in rule.targets {
                    commands.append(command(rule, target, .end(endRequest(rule, target, now: now, notes: &issues))))
                    lastRequest[Self.key(rule.id, target)] = nil
                }
                awaitingPull[position] = 0
            case (true, true):
                if !held.isEmpty { held.remove(position) }
                if !startsOwed.isEmpty, let owed = startsOwed.removeValue(forKey: rules.activities[position].id) {
                    commands += owedStarts(rules.activities[position], owed, in: context, notes: &issues)
                }
                // Only what decides urgency is evaluated now: an Island Pulse status turning to failed.
                let urgent = fact.hasStatus && ActivityRenderer.isUrgent(rules.activities[position], in: context)
                // The dispatcher already knows and renders from the newest states when it pulls; a debounce, though,
                // starts again with every change.
                if awaitingPull[position] == Int(fact.targets) && !urgent && !fact.restartsDebounce { continue }
                let rule = rules.activities[position]
                awaitingPull[position] = rule.targets.count
                for target in rule.targets { commands.append(command(rule, target, .changed(urgent: urgent))) }
            case (false, true):
                let rule = rules.activities[position]
                if !startsOwed.isEmpty { startsOwed[rule.id] = nil }  // every target starts now
                awaitingPull[position] = 0
                var starts: [Command] = []
                for target in rule.targets {
                    switch ActivityRenderer.render(rule, for: target, phase: .start, in: context, notes: &issues) {
                    case .failure(let failure):
                        issues += failure.issues
                    case .success(let request):
                        lastRequest[Self.key(rule.id, target)] = request
                        starts.append(command(rule, target, .start(request)))
                    }
                }
                // Not started anywhere: try again on the next change. Started somewhere: a target whose payload did
                // not render misses this run (its problem is reported) and the others go on.
                if starts.isEmpty { active[position] = false }
                commands += starts
            }
        }
        return (commands, found, evaluated)
    }

    /// Starts for the targets `owed` of an activity still active (added by a reload before the first snapshot).
    private mutating func owedStarts(_ rule: ActivityRule, _ owed: Set<String>, in context: EvaluationContext,
                                     notes issues: inout [PayloadIssue]) -> [Command] {
        var starts: [Command] = []
        for target in rule.targets where owed.contains(target.name) {
            switch ActivityRenderer.render(rule, for: target, phase: .start, in: context, notes: &issues) {
            case .failure(let failure): issues += failure.issues
            case .success(let request):
                lastRequest[Self.key(rule.id, target)] = request
                starts.append(command(rule, target, .start(request)))
            }
        }
        return starts
    }

    /// The payload of an active activity, rendered now from the newest states, when the dispatcher is about to send
    /// it; nil (with its problems) when it cannot be rendered or the activity is no longer active.
    public mutating func payload(activity id: String, target name: String, kind: PushKind, now: Double) -> (request: BackendRequest?, problems: [String]) {
        // Held: what it would show now is what Home Assistant shows while it starts.
        guard let position = positions[id], active[position], !held.contains(position) else { return (nil, []) }
        let rule = rules.activities[position]
        guard let target = rule.target(named: name) else { return (nil, []) }
        if awaitingPull[position] > 0 { awaitingPull[position] -= 1 }
        var issues: [PayloadIssue] = []
        let context = evaluationContext(now: now)
        let result = ActivityRenderer.render(rule, for: target, phase: kind == .start ? .start : .update, in: context, notes: &issues)
        var request: BackendRequest?
        switch result {
        case .success(let rendered):
            request = rendered
            lastRequest[Self.key(id, target)] = rendered
        case .failure(let failure):
            issues += failure.issues
        }
        return (request, problems.newProblems(activity: id, issues).map { "activity \(id): \($0)" })
    }

    /// The end and start that renew an active activity at a target, rendered now; nil when it is not active (or
    /// held in the restart grace) or cannot be rendered.
    public mutating func renewal(activity id: String, target name: String, now: Double) -> (pair: (end: BackendRequest, start: BackendRequest)?, problems: [String]) {
        guard let position = positions[id], active[position], !held.contains(position) else { return (nil, []) }
        let rule = rules.activities[position]
        guard let target = rule.target(named: name) else { return (nil, []) }
        var issues: [PayloadIssue] = []
        let context = evaluationContext(now: now)
        switch ActivityRenderer.renewal(rule, for: target, in: context, notes: &issues) {
        case .success(let pair):
            lastRequest[Self.key(id, target)] = pair.start
            return (pair, problems.newProblems(activity: id, issues).map { "activity \(id): \($0)" })
        case .failure(let failure):
            return (nil, problems.newProblems(activity: id, issues + failure.issues).map { "activity \(id): \($0)" })
        }
    }

    /// Whether the states `active_when` reads look like Home Assistant starting rather than a real end: one of them
    /// missing, `unavailable` or `unknown`, or a number at 0 (a power sensor before its integration reports).
    private func looksLikeStartingUp(_ rule: ActivityRule) -> Bool {
        // A condition only Home Assistant renders reads what LiveBridge cannot see: whether it turned false only
        // because Home Assistant is starting cannot be told, so the grace holds it too.
        if rule.activeWhen.renderedByHomeAssistant != nil { return true }
        let states = self.states
        return rule.activeWhen.entityIDs.contains { id in
            guard let state = states[id]?.state else { return true }
            return state == "unavailable" || state == "unknown" || Double(state) == 0
        }
    }

    /// The end push: the rendered end, or when its fields cannot be rendered a minimal one (`ActivityRenderer.end`).
    private func endRequest(_ rule: ActivityRule, _ target: ActivityTarget, now: Double, notes: inout [PayloadIssue]) -> BackendRequest {
        ActivityRenderer.end(rule, for: target, in: evaluationContext(now: now),
                             last: lastRequest[Self.key(rule.id, target)], notes: &notes)
    }
}
