import FoundationEssentials
public import LiveActivity
public import Platform

/// Runs one `ActivityLane` per activity and target (a backend, or one of a Home Assistant backend's phones): sends what each lane says is due, wakes lanes when their
/// budget or back-off allows, remembers what is on the phones in the state file, and keeps Island Pulse's free tier
/// to one active job per token. Lanes are independent: a slow backend or activity never holds up another.
///
/// Its work — sends, renders, timers, saves — runs in children of `run()` (a job's follow-up in the same child:
/// `run(chain:)`), which its owner runs beside the rest; cancelling `run()` ends it (what is in flight is cancelled
/// with it). A graceful shutdown `flush`es first.
public actor Dispatcher {
    /// What a rule's evaluation asks of an activity at a backend.
    public enum Event: Sendable {
        case start(BackendRequest)
        case change(BackendRequest, urgent: Bool)
        /// The payload changed; it is rendered (by the `PayloadSource`) only when the update is due.
        case changed(urgent: Bool)
        case end(BackendRequest)

        public var name: String {
            switch self {
            case .start: return "start"
            case .change, .changed: return "update"
            case .end: return "end"
            }
        }
    }

    /// One push and how it went, for the log and the metrics (no tokens in here).
    public struct PushRecord: Sendable, Equatable {
        public let activity: String
        /// The lane: the backend's name, or `backend/notify.…` for one of its phones.
        public let target: String
        public let kind: PushKind
        public let report: DeliveryReport
        /// From handing the push to the backend to its answer.
        public let duration: Duration
    }

    /// A budget decision about one activity at one target (updates debounced, deduplicated or held, a renewal), for
    /// the logs that name what happened to whom.
    public struct Decision: Sendable, Equatable {
        public let activity: String
        public let target: String
        /// "debounced 2 updates", "deduplicated 1 update", "held 1 update (not worth a push)", "renewed".
        public let what: String
        /// A hold for the same reason as the lane's last one told, with no unheld push between (`HoldTelling`): not news.
        public let isRepeat: Bool

        public init(activity: String, target: String, what: String, isRepeat: Bool = false) {
            self.activity = activity
            self.target = target
            self.what = what
            self.isRepeat = isRepeat
        }
    }

    /// One activity at one target, for the status page.
    public struct LaneSummary: Sendable {
        public let activity: String
        public let target: String
        public let phase: ActivityLane.Phase
        public let lastDelivered: [UInt8]?
        /// Updates left in this hour's budget (nil: no cap).
        public var updatesLeftThisHour: Int? = nil
        /// Pushes left today (UTC) through the device's Home Assistant relay (nil: not a relayed target).
        public var relayRemaining: Int? = nil

        public init(activity: String, target: String, phase: ActivityLane.Phase, lastDelivered: [UInt8]?,
                    updatesLeftThisHour: Int? = nil, relayRemaining: Int? = nil) {
            self.activity = activity
            self.target = target
            self.phase = phase
            self.lastDelivered = lastDelivered
            self.updatesLeftThisHour = updatesLeftThisHour
            self.relayRemaining = relayRemaining
        }
    }

    private struct Slot {
        var lane: ActivityLane
        /// `activity@target`, the state file's key.
        let key: String
        let activity: String
        let target: String
        /// Set with `use`, which keeps its name and places beside it.
        private(set) var backend: any PushBackend
        /// `backend.name` and `backend.sendsAtOnce`, read on every pump: read through the existential, each read
        /// copied the whole slot (3 % of the flood's samples).
        private(set) var backendName: String
        private(set) var places: Int?
        /// The device whose Home Assistant push relay this target spends (its notify service), if any.
        var device: String?
        var inFlight = false
        /// When the dispatcher's timer pumps the lane; a lane due to wake at or before a new deadline keeps it.
        var wake: Moment?
        var lockLogged = false
        /// The lane's counters when last reported (`onDecision` says what changed since).
        var reported = ActivityLane.Counters()
        /// Which holds were told, so a lane held the same way before every push is not news every time.
        var holdTelling = HoldTelling()
        var lastDelivered: [UInt8]?
        /// A payload is being rendered for it: nothing else is asked of the lane until it is handed over.
        var rendering = false
        /// Shown by an event, not a rule: counted against `eventBornLimit`, and forgotten once it has ended.
        var eventBorn = false
        /// Forgotten: the position waits in `vacancies` for the next new lane.
        var vacant = false
        /// Waits in `sendQueue` for one of its backend's places.
        var queuedToSend = false
        /// Holds one of its backend's places: from when it was let in, through its render, until its send is answered
        /// or it has nothing to send now.
        var holdsPlace = false
        /// Its backend's position in `placesTaken` and `sendQueue` (found by name once: a pump reads it several times).
        var placeIndex: Int?

        init(lane: ActivityLane, key: String, activity: String, target: String, backend: any PushBackend, device: String? = nil,
             vacant: Bool = false) {
            self.lane = lane
            self.key = key
            self.activity = activity
            self.target = target
            self.backend = backend
            backendName = backend.name
            places = backend.sendsAtOnce
            self.device = device
            self.vacant = vacant
        }

        mutating func use(_ backend: any PushBackend) {
            self.backend = backend
            backendName = backend.name
            places = backend.sendsAtOnce
        }
    }

    /// A backend's places (`PushBackend.sendsAtOnce`, its HTTP client's transfers at once to a host). Every lane may be
    /// due in the same instant (two hundred at the top of a second under `min_interval`); a lane past the places
    /// waits here as a number in `sendQueue`, not as a suspended task holding its frames in the HTTP client's queue
    /// (1.2 MiB of task memory for 200 under the flood). A lane let in keeps its place through its render, so a
    /// rendered update is not sent to the back of the queue to be rendered again.
    private var placesTaken: [Int] = []
    /// Lanes waiting for a place, by backend, in the order they asked.
    private var sendQueue: [[Int]] = []
    /// Each backend name's position in `placesTaken` and `sendQueue`.
    private var placeIndexes: [String: Int] = [:]

    /// The position of slot `i`'s backend in `placesTaken` and `sendQueue`, given on first asking.
    private func placeIndex(_ i: Int) -> Int {
        if let known = slots[i].placeIndex { return known }
        let name = slots[i].backendName
        let index = placeIndexes[name] ?? {
            placesTaken.append(0)
            sendQueue.append([])
            placeIndexes[name] = placesTaken.count - 1
            return placesTaken.count - 1
        }()
        slots[i].placeIndex = index
        return index
    }

    /// Renders an activity's payload when its update is due (pulled, not rendered per change).
    private var payloads: (any PayloadSource)?

    public func setPayloadSource(_ source: any PayloadSource) { payloads = source }

    private var backends: [String: any PushBackend]
    private let retry: RetryPolicy
    private let stateFile: DeliveryStateFile?
    private var state: DeliveryState
    /// Lanes in stable storage, found by position: a change updates its lane in place (no copy out of a dictionary
    /// and back). A position stays with its lane until the lane is forgotten (an event-born one that ended), and is
    /// then reused.
    private var slots: [Slot] = []
    private var slotIndex: [String: Int] = [:]
    /// Positions of forgotten lanes, reused by new ones.
    private var vacancies: [Int] = []
    /// The counters of forgotten lanes, so the totals never go down.
    private var forgottenCounters = ActivityLane.Counters()
    /// How many lanes events may hold at once (`events.max_activities`).
    private var eventBornLimit: Int
    private let onPush: @Sendable (PushRecord) -> Void
    private let onLog: @Sendable (String) -> Void
    /// What is worth telling but is no problem (a renewal).
    private let onInfo: @Sendable (String) -> Void
    /// Each budget decision, named.
    private let onDecision: @Sendable (Decision) -> Void
    /// Waits for quiet, each released when it comes (or when its task is cancelled).
    private var quietWaiters: [Latch] = []
    /// Work for `run()` to start as its children, in order. A job runs isolated to the dispatcher (it is handed it), and
    /// what it awaits (the render, the backend's send) runs there too (`nonisolated(nonsending)`): each step off the
    /// dispatcher and back was a job on the loop's queue, about forty a push.
    private var jobs = JobQueue<Job>()
    typealias Job = @Sendable (isolated Dispatcher) async -> Void

    /// Runs the dispatcher's work until cancelled: each send, render and save is a child of this call, and so is the
    /// one timer that wakes the lanes. Work asked for before it runs waits for it.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runTimer() }
            while !Task.isCancelled {
                for job in jobs.takeAll() { group.addTask { await self.run(chain: job) } }
                await jobs.arrival.wait()
            }
        }
    }

    /// Runs `first`, then the first job its last step performed (`lastStep`), and so on, in this one task: a push is a
    /// render then a send, and each was a task of its own and a wake of `run()` (about a tenth of a push's work).
    /// The other jobs a last step performed go to `run()` as before; so does all of it once the task is cancelled.
    /// Every `chainSlice` jobs the chain lets the executor go: jobs that never suspend (a backend that answers where
    /// it is called, a refusal before any request) would otherwise hold the loop's thread for a whole queue of lanes.
    private func run(chain first: @escaping Job) async {
        var job = first
        var sinceYield = 0
        while true {
            await job(self)
            guard !handedOn.isEmpty else { return }
            let next = handedOn
            handedOn = []
            if Task.isCancelled {
                for other in next { jobs.append(other) }
                return
            }
            job = next[0]
            for other in next.dropFirst() { jobs.append(other) }
            sinceYield += 1
            if sinceYield == Self.chainSlice {
                sinceYield = 0
                await Task.yield()
            }
        }
    }

    /// How many jobs a chain runs before it lets its executor go (see `run(chain:)`).
    static let chainSlice = 16

    /// Set while a job's last step runs: jobs performed meanwhile are kept in `handedOn` for its task to run next.
    private var collecting = false
    /// Jobs performed by the last step that ran; taken by `run(chain:)` as soon as that step's job returns (nothing
    /// awaits in between; were another's added first, that chain would run them: none is lost either way).
    private var handedOn: [Job] = []

    /// A job's last, synchronous step (its report to the lanes): what it performs runs next in the same task
    /// (`run(chain:)`). Only as a job's last statement: the jobs are taken when the job returns.
    private func lastStep(_ step: () -> Void) {
        precondition(!collecting, "one last step at a time")
        collecting = true
        step()
        collecting = false
    }

    /// The lanes' one timer: sleeps until the earliest wake any lane asked for (or until a nearer one is asked:
    /// `timerRearm`), then pumps the lanes that are due. One sleeping task, however many lanes wait.
    private func runTimer() async {
        while !Task.isCancelled {
            let (next, rearm) = armTimer()
            if let next { _ = await rearm.sleep(until: next.instant, on: sleeper) } else { await rearm.wait() }
            guard !Task.isCancelled else { return }
            wakeDueLanes()
        }
    }

    /// When the timer goes off next, and the latch a nearer wake triggers to re-arm it.
    private var timer: (at: Moment?, rearm: Latch) = (nil, Latch())

    private func armTimer() -> (Moment?, Latch) {
        // By position, reading two fields in place: a lane is large, and a copy of each per wake was 2 % of the flood.
        var next: Moment?
        for i in slots.indices where !slots[i].vacant {
            if let wake = slots[i].wake, next.map({ wake < $0 }) ?? true { next = wake }
        }
        timer = (next, Latch())
        return timer
    }

    private func wakeDueLanes() {
        let now = Moment.now
        for i in slots.indices where !slots[i].vacant {
            guard let wake = slots[i].wake, wake <= now else { continue }
            slots[i].wake = nil
            pump(i)
        }
    }

    /// Hands work to `run()`.
    private func perform(_ job: @escaping Job) {
        if collecting { handedOn.append(job) } else { jobs.append(job) }
    }

    /// Where the dispatcher's work runs: the executor it was given, else an executor of its own.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? ownExecutor.unownedExecutor
    }
    private let executor: (any SerialExecutor)?
    /// Where the lanes' timer sleeps: the daemon's event loop keeps it on its own timers (no other thread woken for it).
    private let sleeper: any Sleeper
    /// An actor of its own, whose default executor the dispatcher takes when given none.
    private let ownExecutor = OwnExecutor()
    private actor OwnExecutor {}

    /// `executor`: where its work runs (the daemon's: the socket's thread); nil for an executor of its own. `sleeper`:
    /// where the lanes' timer sleeps (the daemon's: that thread's event loop).
    public init(backends: [any PushBackend], retry: RetryPolicy = RetryPolicy(), stateFile: DeliveryStateFile? = nil,
                eventBornLimit: Int = 20, executor: (any SerialExecutor)? = nil, sleeper: any Sleeper = TaskSleeper(), onPush: @escaping @Sendable (PushRecord) -> Void = { _ in }, log: @escaping @Sendable (String) -> Void = { _ in },
                info: @escaping @Sendable (String) -> Void = { _ in }, decision: @escaping @Sendable (Decision) -> Void = { _ in }) {
        self.backends = Dictionary(backends.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.retry = retry
        self.stateFile = stateFile
        self.executor = executor
        self.sleeper = sleeper
        self.onPush = onPush
        self.onLog = log
        self.onInfo = info
        self.onDecision = decision
        self.eventBornLimit = eventBornLimit
        self.state = stateFile?.load(warn: log) ?? DeliveryState()
        (slots, slotIndex) = Self.dismissals(in: state, backends: self.backends, retry: retry)
    }

    /// Lanes for the clears saved before a restart: each is sent when its time comes (`resume`), as if LiveBridge had
    /// never stopped.
    private static func dismissals(in state: DeliveryState, backends: [String: any PushBackend], retry: RetryPolicy)
        -> ([Slot], [String: Int]) {
        var slots: [Slot] = [], slotIndex: [String: Int] = [:]
        let now = Moment.now, epoch = Date().timeIntervalSince1970
        for (key, entry) in state.entries.sorted(by: { $0.key < $1.key }) {
            guard let saved = entry.dismissal, let (activity, target) = DeliveryState.split(key) else { continue }
            let name = DeliveryState.backend(ofTarget: target)
            guard let backend = backends[name] else { continue }
            let clear = BackendRequest(backend: name, kind: saved.kind, method: saved.method, target: saved.target, body: saved.body)
            let due = now.advanced(by: .milliseconds(Int64(min(max(0, saved.at - epoch), DeliveryState.timeWindow) * 1000)))
            slotIndex[key] = slots.count
            slots.append(Slot(lane: ActivityLane(budget: UpdateBudget(), retry: retry,
                                                 dismissing: Push(.end, body: clear.bodyBytes, isUrgent: true, request: clear), at: due),
                              key: key, activity: activity, target: target, backend: backend,
                              device: clear.relayDevice))
        }
        return (slots, slotIndex)
    }

    /// How many lanes events may hold at once, from reloaded rules (lanes beyond it already go on until they end).
    public func setEventBornLimit(_ limit: Int) { eventBornLimit = limit }

    /// Starts the timers of the clears restored from the state file.
    public func resume() {
        for i in slots.indices { pump(i) }
    }

    /// Backends from a reloaded rules file: each replaces the one of its name, for queued and future pushes alike (a
    /// push in flight finishes with the old one). Backends no longer declared stay, so lanes still ending can.
    public func replaceBackends(_ replacements: [any PushBackend]) {
        for backend in replacements { backends[backend.name] = backend }
        for i in slots.indices {
            if let backend = backends[slots[i].backendName] { slots[i].use(backend) }
        }
    }

    /// Activities the state file says are on a phone: after a restart the caller ends those whose condition is now false.
    public var runningActivities: [(activity: String, target: String)] {
        state.entries.filter(\.value.running).keys.sorted().compactMap(DeliveryState.split)
    }

    /// One event for one activity at one target, as the rules engine hands them over.
    public struct Submission: Sendable {
        public let activity: String
        /// The lane: the backend's name, or `backend/notify.…` for one of a Home Assistant backend's phones.
        public let target: String
        /// The backend that sends it.
        public let backend: String
        /// Home Assistant: the device whose push relay quota it spends (the notify service); nil elsewhere.
        public let device: String?
        public let budget: UpdateBudget
        public let event: Event
        /// Shown by a Home Assistant event rather than a rule: bounded in number and forgotten once ended.
        public var eventBorn = false
        public init(activity: String, target: String, backend: String, device: String?, budget: UpdateBudget, event: Event) {
            self.activity = activity
            self.target = target
            self.backend = backend
            self.device = device
            self.budget = budget
            self.event = event
        }

        /// At a target named as its backend (one phone, one service); a Home Assistant request names its device.
        public init(activity: String, backend: String, budget: UpdateBudget, event: Event) {
            var device: String?
            switch event {
            case .start(let request), .change(let request, _), .end(let request):
                device = request.relayDevice
            case .changed: break
            }
            self.init(activity: activity, target: backend, backend: backend, device: device, budget: budget, event: event)
        }
    }

    /// A whole evaluation's events in one call: one hop onto the dispatcher per batch of changes, not per activity.
    public func submit(_ batch: [Submission]) {
        for item in batch { submit(item) }
    }

    /// At a target named as its backend.
    public func submit(activity: String, backend: String, budget: UpdateBudget, _ event: Event) {
        submit(Submission(activity: activity, backend: backend, budget: budget, event: event))
    }

    /// Takes one event; false when it starts an event-born activity new to the dispatcher and `eventBornLimit` lanes
    /// are held by events already (nothing is done then: the caller tells why).
    @discardableResult
    public func submit(_ item: Submission) -> Bool {
        let (activity, name, budget, event) = (item.activity, item.backend, item.budget, item.event)
        guard let backend = backends[name] else {
            onLog("activity \(activity): no backend named \(name)")
            return true
        }
        let key = DeliveryState.key(activity: activity, target: item.target)
        let i: Int
        if let found = slotIndex[key] {
            i = found
            if slots[i].lane.budget != budget { slots[i].lane.budget = budget }
        } else {
            // Only a start makes an activity an event holds; an update or end of one without a lane changes nothing
            // (or ends one saved before a restart) and is forgotten at once.
            if item.eventBorn, case .start = event, eventBornLanes >= eventBornLimit { return false }
            let saved = state.entries[key]
            let started = saved?.started.map { Self.instant(fromEpoch: $0) }
            let slot = Slot(lane: ActivityLane(budget: budget, retry: retry, resuming: saved?.running ?? false, deliveredDigest: saved?.digest,
                                               startedAt: started, dismissed: saved?.dismissed ?? false),
                            key: key, activity: activity, target: item.target, backend: backend, device: item.device)
            if let reused = vacancies.popLast() {
                i = reused
                slots[i] = slot
            } else {
                i = slots.count
                slots.append(slot)
            }
            slotIndex[key] = i
        }
        if item.eventBorn { slots[i].eventBorn = true }
        if let device = item.device, slots[i].device == nil { slots[i].device = device }
        let now = Moment.now
        switch event {
        case .start(let request): slots[i].lane.start(Push(.start, body: request.bodyBytes, isUrgent: true, request: request), at: now)
        case .change(let request, let urgent):
            slots[i].lane.change(Push(.update, body: request.bodyBytes, isUrgent: urgent, request: request), at: now)
        case .changed(let urgent): slots[i].lane.markChanged(urgent: urgent, at: now)
        case .end(let request): slots[i].lane.end(Push(.end, body: request.bodyBytes, isUrgent: true, request: request), at: now)
        }
        pump(i)
        forgetIfEnded(i)
        return true
    }

    /// Lanes events hold now.
    private var eventBornLanes: Int { slots.reduce(0) { $0 + ($1.eventBorn && !$1.vacant ? 1 : 0) } }

    /// An event-born lane that has ended (idle, nothing queued, in flight or waiting to be cleared) is forgotten: its
    /// position is freed and its state entry removed, so made-up ids leave nothing behind.
    private func forgetIfEnded(_ i: Int) {
        guard slots[i].eventBorn else { return }  // before copying the lane: every push ends here
        let slot = slots[i]
        guard slot.eventBorn, !slot.vacant, slot.lane.phase == .idle, slot.lane.isQuiet, slot.lane.dismissal == nil, !slot.inFlight,
              !slot.rendering else { return }
        cancelWake(i)
        // Its place in its backend's queue goes too: the position may be reused by a lane of another backend.
        if slot.queuedToSend { sendQueue[placeIndex(i)].removeAll { $0 == i } }
        forgottenCounters.add(slot.lane.counters)
        slotIndex[slot.key] = nil
        if state.entries[slot.key] != nil { record(slot.key, DeliveryState.Entry(running: false, digest: nil)) }
        slots[i] = Slot(lane: ActivityLane(), key: "", activity: "", target: "", backend: slot.backend, vacant: true)
        vacancies.append(i)
    }

    /// Counters summed over every lane.
    public var counters: ActivityLane.Counters {
        slots.reduce(into: forgottenCounters) { total, slot in total.add(slot.lane.counters) }
    }

    /// Pushes left today through each device's Home Assistant relay (500 a UTC day each), by notify service.
    public var relayRemaining: [String: Int] {
        let now = Date().timeIntervalSince1970
        var left: [String: Int] = [:]
        for device in Set(slots.compactMap(\.device)).union(state.relays.keys) {
            left[device] = (state.relays[device] ?? RelayBudget()).remaining(at: now)
        }
        return left
    }

    /// The user swiped the activity away at this target (Home Assistant's `mobile_app_live_activity_dismissed`):
    /// nothing more is sent to it until its next start.
    /// Another notification went to a phone through its relay (an automation's, not LiveBridge's): it spends the
    /// same daily quota, so it is counted, and the phone's lanes see the new allowance.
    public func countRelayedElsewhere(device: String, at epoch: Double) {
        state.relays[device, default: RelayBudget()].record(at: epoch)
        saveSoon()
        for i in slots.indices where slots[i].device == device { slots[i].lane.relay = relayAllowance(device) }
    }

    public func dismissedByUser(activity: String, target: String) {
        guard let i = slotIndex[DeliveryState.key(activity: activity, target: target)] else { return }
        slots[i].lane.dismissedByUser()
        persist(i)
        pump(i)
        resumeQuietWaiters()
    }

    public var lanes: [LaneSummary] {
        let now = Moment.now, relays = relayRemaining
        return slots.filter { !$0.vacant }.map { slot in
            LaneSummary(activity: slot.activity, target: slot.target, phase: slot.lane.phase, lastDelivered: slot.lastDelivered,
                        updatesLeftThisHour: slot.lane.updatesLeft(at: now), relayRemaining: slot.device.flatMap { relays[$0] })
        }
        .sorted { ($0.activity, $0.target) < ($1.activity, $1.target) }
    }

    public func phase(activity: String, target: String) -> ActivityLane.Phase? {
        slotIndex[DeliveryState.key(activity: activity, target: target)].map { slots[$0].lane.phase }
    }

    /// Sends every queued update now and waits, at most `deadline`, for everything to be delivered (the sends are
    /// `run()`'s children: it must be running). Returns whether all got through in time. From a cancelled task it
    /// waits for nothing.
    public func flush(deadline: Duration) async -> Bool {
        for i in slots.indices where !slots[i].vacant {
            slots[i].lane.hurry()
            pump(i)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitUntilQuiet() }
            group.addTask { try? await Task.sleep(for: deadline) }
            // Quiet, the deadline, or the task cancelled (both children end at once then): whichever comes first.
            await group.next()
            group.cancelAll()
        }
        if savePending { save() }
        return isQuiet
    }

    /// Returns once nothing is queued or in flight anywhere (pending debounced updates count as queued), or when the
    /// waiting task is cancelled.
    public func waitUntilQuiet() async {
        if isQuiet { return }
        let latch = Latch()
        quietWaiters.append(latch)
        await latch.wait()
    }

    private var isQuiet: Bool {
        slots.indices.allSatisfy { slots[$0].lane.isQuiet && !slots[$0].inFlight && !slots[$0].rendering }
    }

    // MARK: Running the lanes

    /// Tells what the lane's budget decided since it was last told (a few integer comparisons when nothing was).
    /// Debounced changes are told with the push that carried their last state (`afterPush`), not one by one: a
    /// burst of changes is one line.
    private func reportDecisions(_ i: Int, afterPush: Bool) {
        var now = slots[i].lane.counters, before = slots[i].reported
        if !afterPush { now.debounced = before.debounced }
        guard now.debounced != before.debounced || now.deduplicated != before.deduplicated || now.held != before.held
            || now.renewals != before.renewals || now.holds != before.holds else { return }
        slots[i].reported.debounced = now.debounced
        slots[i].reported.deduplicated = now.deduplicated
        slots[i].reported.held = now.held
        slots[i].reported.renewals = now.renewals
        slots[i].reported.holds = now.holds
        func updates(_ n: Int) -> String { n == 1 ? "1 update" : "\(n) updates" }
        var said: [(what: String, isRepeat: Bool)] = []
        func say(_ what: String) { said.append((what, false)) }
        if now.debounced > before.debounced { say("debounced \(updates(now.debounced - before.debounced))") }
        if now.deduplicated > before.deduplicated { say("deduplicated \(updates(now.deduplicated - before.deduplicated)) (the phone shows it)") }
        if now.held > before.held { say("held \(updates(now.held - before.held)) (not worth a push)") }
        if now.renewals > before.renewals { say("renewed (ended and started again before eight hours)") }
        // Each time the budget starts to hold the next update, and why: the phone lags Home Assistant on purpose.
        for reason in ActivityLane.Hold.allCases where now.holds[reason] > before.holds[reason] {
            let what = switch reason {
            case .startSettle: "holding the next update: start_settle (Home Assistant's activity token is not there yet)"
            case .minInterval: "holding the next update: min_interval since the last push"
            case .hourlyBudget: "holding the next update: max_per_hour spent (\(slots[i].lane.budget.maxPerHour ?? 0) in the last hour)"
            case .relayBudget: "holding the next update: the relay's daily budget is kept for ends"
            case .notWorthAPush: "holding the next update: under min_change (a small move waits for a quiet)"
            }
            said.append((what, slots[i].holdTelling.began(reason)))
        }
        for (what, isRepeat) in said {
            onDecision(Decision(activity: slots[i].activity, target: slots[i].target, what: what, isRepeat: isRepeat))
        }
    }

    private func pump(_ i: Int, letIn: Bool = false) {
        defer { reportDecisions(i, afterPush: false) }
        guard !slots[i].inFlight, !slots[i].rendering else { return }
        if let places = slots[i].places, !slots[i].holdsPlace {
            let place = placeIndex(i)
            guard !slots[i].queuedToSend, placesTaken[place] < places, letIn || sendQueue[place].isEmpty else {
                // The backend's places are taken, or others asked first: the lane is let in when a place frees.
                if !slots[i].queuedToSend {
                    slots[i].queuedToSend = true
                    sendQueue[place].append(i)
                }
                return
            }
            placesTaken[place] += 1
            slots[i].holdsPlace = true
        }
        decide(i)
        // Nothing sent or rendered now (it waits for its budget, or has nothing to do): the place goes to the next,
        // unless the lane was let in by `admitWaiting`, whose loop goes on.
        if slots[i].holdsPlace, !slots[i].inFlight, !slots[i].rendering {
            releasePlace(i)
            if !letIn { admitWaiting(on: placeIndex(i)) }
        }
    }

    private func releasePlace(_ i: Int) {
        slots[i].holdsPlace = false
        placesTaken[placeIndex(i)] -= 1
    }

    /// What the lane does next: render, send or wait.
    private func decide(_ i: Int) {
        let now = Moment.now
        if let device = slots[i].device { slots[i].lane.relay = relayAllowance(device) }
        switch slots[i].lane.next(at: now) {
        case .renew:
            slots[i].rendering = true
            cancelWake(i)
            let (activity, target, source) = (slots[i].activity, slots[i].target, payloads)
            perform { dispatcher in
                let pair = await source?.renewal(activity: activity, target: target)
                dispatcher.lastStep { dispatcher.renewed(i, pair) }
            }
        case .render(let kind):
            slots[i].rendering = true
            cancelWake(i)
            let (activity, target, source) = (slots[i].activity, slots[i].target, payloads)
            perform { dispatcher in
                let request = await source?.payload(activity: activity, target: target, kind: kind)
                dispatcher.lastStep { dispatcher.rendered(i, kind, request) }
            }
        case .send(let push):
            let backend = slots[i].backend
            if push.kind == .start, backend.allowsOneActiveJob, let other = activeJob(on: backend.name, except: i) {
                // Free tier: one job at a time per token. Wait for the other to end, as the service would insist.
                slots[i].lane.finished(.locked(for: nil), at: now)
                if !slots[i].lockLogged {
                    onLog("activity \(slots[i].activity) waits: backend \(backend.name) is on the free tier and \(other) is active")
                    slots[i].lockLogged = true
                }
                schedule(i, slots[i].lane.next(at: now))
                return
            }
            slots[i].inFlight = true
            cancelWake(i)
            if push.kind == .start {
                // Written ahead: if LiveBridge dies before the answer, the next start knows a start may be on the phone
                // and ends it, or goes on with updates, instead of forgetting it.
                record(slots[i].key, DeliveryState.Entry(running: true, digest: nil))
            }
            perform { [push] dispatcher in
                let started = Moment.now
                let report: DeliveryReport
                if let request = push.request {
                    report = await backend.deliver(request, kind: push.kind)
                } else {
                    report = DeliveryReport(.rejected(.noRequest), code: .noRequest)
                }
                let duration = Moment.now - started
                dispatcher.lastStep { dispatcher.completed(i, push, report, duration: duration) }
            }
        case .wait(let until):
            schedule(i, .wait(until: until))
            resumeQuietWaiters()
        }
    }

    private func renewed(_ i: Int, _ pair: (end: BackendRequest, start: BackendRequest)?) {
        slots[i].rendering = false
        slots[i].lane.renewing(pair.map { (Push(.end, body: $0.end.bodyBytes, isUrgent: true, request: $0.end),
                                           Push(.start, body: $0.start.bodyBytes, isUrgent: true, request: $0.start)) }, at: .now)
        if pair != nil {
            onInfo("activity \(slots[i].activity) at \(slots[i].target): renewed (ended and started again before iOS's eight hours end it)")
        }
        pump(i)
        resumeQuietWaiters()
    }

    /// What the device's relay lets updates do now.
    private func relayAllowance(_ device: String) -> ActivityLane.RelayAllowance {
        guard let relay = state.relays[device] else { return .open }
        let epoch = Date().timeIntervalSince1970
        let (thin, until) = relay.allowance(at: epoch)
        if let until { return .reserved(until: Self.instant(fromEpoch: until)) }
        return thin ? .thin : .open
    }

    /// A wall-clock time as an instant of the continuous clock (for times saved across restarts).
    /// Clamped to a year either way, so no saved time can trap the conversion.
    static func instant(fromEpoch epoch: Double) -> Moment {
        let year = 366 * 86_400.0
        let delta = min(max(epoch - Date().timeIntervalSince1970, -year), year)
        return Moment.now.advanced(by: .milliseconds(Int64(((delta.isNaN ? 0 : delta) * 1000).rounded())))
    }

    static func epoch(of instant: Moment) -> Double {
        Date().timeIntervalSince1970 + (instant - Moment.now).secondsValue
    }

    private func rendered(_ i: Int, _ kind: PushKind, _ request: BackendRequest?) {
        slots[i].rendering = false
        slots[i].lane.rendered(request.map { Push(kind, body: $0.bodyBytes, isUrgent: true, request: $0) }, at: .now)
        pump(i)
        resumeQuietWaiters()
    }

    /// The lane need not be woken (the timer, if it goes off for it, finds nothing due).
    private func cancelWake(_ i: Int) {
        slots[i].wake = nil
    }

    private func schedule(_ i: Int, _ decision: ActivityLane.Decision) {
        guard case .wait(let until?) = decision else { return }
        if let wake = slots[i].wake, wake <= until { return }  // it pumps then, and the lane decides again
        slots[i].wake = until
        // Nearer than the timer's next: it re-arms.
        if timer.at.map({ until < $0 }) ?? true { timer.rearm.trigger() }
    }

    private func completed(_ i: Int, _ push: Push, _ report: DeliveryReport, duration: Duration) {
        slots[i].inFlight = false
        // The retry's jitter, drawn by the lane only for a retry: a draw is a getrandom(2) call.
        slots[i].lane.finished(report.outcome, at: .now, random: Double.random(in: 0..<1))
        if case .delivered = report.outcome {
            slots[i].lockLogged = false
            slots[i].lastDelivered = push.body
        }
        if report.outcome == .delivered || report.outcome == .alreadyRunning, let device = slots[i].device {
            state.relays[device, default: RelayBudget()].record(at: Date().timeIntervalSince1970)
            saveSoon()
        }
        let (activity, backendName) = (slots[i].activity, slots[i].backendName)
        onPush(PushRecord(activity: activity, target: slots[i].target, kind: push.kind, report: report, duration: duration))
        if case .rejected(let code) = report.outcome {
            onLog("activity \(activity): \(slots[i].target) refused the \(push.kind.rawValue) (\(code.explained)); not retried")
        }
        persist(i)
        // Only a push that reached the service: a retried one is the same push, not a sign the lane went quiet.
        if report.outcome == .delivered || report.outcome == .alreadyRunning { slots[i].holdTelling.pushed() }
        reportDecisions(i, afterPush: true)
        // An end frees a place: starts waiting on the backend's limit of activities at once try again now.
        if push.kind == .end, slots[i].lane.phase == .idle {
            for other in slots.indices where other != i && slots[other].backendName == backendName && slots[other].lane.waitsForAPlace {
                slots[other].lane.retryNow()
                pump(other)
            }
        }
        // The place goes back before the lane asks again: others waiting for it go first.
        if slots[i].holdsPlace {
            releasePlace(i)
            admitWaiting(on: placeIndex(i))
        }
        pump(i)
        forgetIfEnded(i)
        resumeQuietWaiters()
    }

    /// Gives the backend's free places to the lanes waiting for one, first come first served. A lane let in that has
    /// nothing to send now gives its place back at once, and the next one is let in.
    private func admitWaiting(on place: Int) {
        while let j = sendQueue[place].first, placesTaken[place] < slots[j].places ?? .max {
            sendQueue[place].removeFirst()
            slots[j].queuedToSend = false
            pump(j, letIn: true)
        }
    }

    private func activeJob(on backend: String, except i: Int) -> String? {
        slots.indices.first { j in
            j != i && slots[j].backendName == backend && [.running, .starting, .ending].contains(slots[j].lane.phase)
        }.map { slots[$0].activity }
    }

    /// Records slot `i`'s lane; the lane is read where it stands (passed by value it was copied whole: ~20 retains
    /// a push).
    private func persist(_ i: Int) {
        precondition(slots.indices.contains(i), "a slot that exists")  // the buffer's subscript below is unchecked
        let entry = slots.withUnsafeBufferPointer { Self.entry(of: $0[i].lane) }
        record(slots[i].key, entry)
    }

    private static func entry(of lane: ActivityLane) -> DeliveryState.Entry {
        let running = lane.phase == .running || lane.phase == .ending || lane.phase == .dismissed
        let dismissal = lane.dismissal.flatMap { clear, at in
            clear.request.map { request in
                DeliveryState.Dismissal(target: request.target, body: request.body, at: Self.epoch(of: at), kind: request.kind, method: request.method)
            }
        }
        // Whole seconds: the start time is saved once per start, not again for every sub-second of clock drift.
        let started = running ? lane.startedAt.map { Self.epoch(of: $0).rounded() } : nil
        return DeliveryState.Entry(running: running, digest: running ? lane.delivered : nil, dismissal: dismissal,
                                   started: started, dismissed: lane.phase == .dismissed)
    }

    /// A start or an end (the running flag) is saved at once: it decides start-versus-update after a crash.
    /// A new digest only saves an update push after a restart, so it is written at most once a second (and by
    /// `flush`), not with an fsync on every delivered update.
    private func record(_ key: String, _ entry: DeliveryState.Entry) {
        let stored: DeliveryState.Entry? = entry.isKept ? entry : nil
        let previous = state.entries[key]
        guard previous != stored else { return }
        state.entries[key] = stored
        if previous?.running != stored?.running || previous?.dismissal != stored?.dismissal || previous?.dismissed != stored?.dismissed {
            save()
        } else {
            saveSoon()
        }
    }

    /// A save within a second (one for however many changes come in it). One timer at a time: a save made meanwhile
    /// (a start's, at once) leaves it running, so a burst of starts does not leave a timer each behind, every one of
    /// which saved again (an fsync on the socket's thread) as soon as the next update came (194 in the first second
    /// of `make bench`'s flood, after its 201 starts).
    private func saveSoon() {
        savePending = true
        guard !saveScheduled else { return }
        saveScheduled = true
        let due = Moment.now.advanced(by: .seconds(1)), sleeper = self.sleeper
        perform { dispatcher in
            try? await sleeper.sleep(until: due.instant)
            dispatcher.saveIfPending()
        }
    }

    /// Changes not yet saved, due within the second (`saveSoon`); a save made meanwhile took them.
    private var savePending = false
    /// `saveSoon`'s timer is running.
    private var saveScheduled = false

    private func saveIfPending() {
        saveScheduled = false
        if savePending { save() }
    }

    private func save() {
        savePending = false
        guard let stateFile else { return }
        do { try stateFile.save(state) } catch { onLog("cannot save delivery state: \(error)") }
    }

    private func resumeQuietWaiters() {
        guard !quietWaiters.isEmpty, isQuiet else { return }
        let waiters = quietWaiters
        quietWaiters = []
        for waiter in waiters { waiter.trigger() }
    }
}
