import Dispatcher
import JSON
import LiveActivity
import Rules

/// Activities shown and ended by an event on Home Assistant's bus (what the blueprints fire, `event_type` in the
/// rules): each event is checked like a rule's payload and dispatched the same way; a bad one is told to Home
/// Assistant as a persistent notification, once per activity and problem. Pure: the service carries out the actions.
struct BlueprintEvents {
    /// What one event leads to.
    enum Action {
        /// A valid event: this goes to the dispatcher.
        case submit(Dispatcher.Submission)
        /// A problem not told before: logged, and created as this persistent notification.
        case notify(activity: String, problem: String, notificationID: String, title: String, message: String)
    }

    private var told = ProblemReport()
    /// Activities whose problems are remembered, at most: past it the record starts afresh (a problem may be told
    /// twice), so events naming ever new ids cannot grow it without end.
    static let rememberedActivities = 1_000

    /// `start` starts or updates; `update` updates a running activity only (the dispatcher ignores a change to an idle
    /// one); `end` ends.
    static func event(_ action: ActivityEvent.Action, _ request: BackendRequest) -> Dispatcher.Event {
        switch action {
        case .show: return .start(request)
        case .update: return .change(request, urgent: false)
        case .end: return .end(request)
        }
    }

    mutating func take(_ data: JSONValue, rules: RulesFile) -> [Action] {
        switch ActivityEvent.decode(data, rules: rules) {
        case .success(let event):
            // Valid again: a later problem is told again.
            _ = told.newProblems(activity: event.activity, [])
            return event.requests.map { target, request in
                var submission = Dispatcher.Submission(activity: event.activity, target: target, backend: event.backend.name,
                                                       device: request.relayDevice, budget: rules.budget.settled(for: event.backend.kind),
                                                       event: Self.event(event.action, request))
                submission.eventBorn = true
                return .submit(submission)
            }
        case .failure(let failure):
            let activity = failure.activity.isEmpty ? "unnamed" : failure.activity
            if told.count >= Self.rememberedActivities { told = ProblemReport() }
            return told.newProblems(activity: activity, failure.issues).map { problem in
                Self.notice(activity: activity, problem, eventType: rules.eventType)
            }
        }
    }

    /// The dispatcher refused to start one more event-born activity: the rules' `eventActivityLimit` are shown already.
    mutating func refused(_ submission: Dispatcher.Submission, rules: RulesFile) -> Action? {
        let limit = rules.eventActivityLimit
        let issue = PayloadIssue(path: "activity", "is one more than the \(limit) activities events may show at once (events.max_activities); end one first")
        return told.newProblems(activity: submission.activity, [issue]).first.map { Self.notice(activity: submission.activity, $0, eventType: rules.eventType) }
    }

    /// A problem as a log line and a persistent notification (its id from the activity and the problem, so it is one per pair).
    static func notice(activity: String, _ problem: PayloadIssue, eventType: String) -> Action {
        .notify(activity: activity, problem: problem.description,
                notificationID: "livebridge_\(activity)_\(DeliveryState.digest(Array(problem.description.utf8)).prefix(8))",
                title: "LiveBridge: activity \(activity)",
                message: "The \(eventType) event for \(activity) was not sent: \(problem.path) \(problem.message)")
    }
}
