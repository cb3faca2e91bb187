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
                .submit(Dispatcher.Submission(activity: event.activity, target: target, backend: event.backend.name,
                                              device: request.kind == .homeassistant ? request.target : nil, budget: rules.budget,
                                              event: Self.event(event.action, request)))
            }
        case .failure(let failure):
            let activity = failure.activity.isEmpty ? "unnamed" : failure.activity
            return told.newProblems(activity: activity, failure.issues).map { problem in
                .notify(activity: activity, problem: problem.description,
                        notificationID: "livebridge_\(activity)_\(DeliveryState.digest(Array(problem.description.utf8)).prefix(8))",
                        title: "LiveBridge: activity \(activity)",
                        message: "The \(rules.eventType) event for \(activity) was not sent: \(problem.path) \(problem.message)")
            }
        }
    }
}
