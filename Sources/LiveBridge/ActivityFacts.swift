import LiveActivity
import Rules
import Templates

/// What the engine reads of every activity a change reaches, laid out together: the rules themselves are objects
/// spread over the heap, and reading several of their fields for each of hundreds of activities cost a cache miss
/// each (perf: three loads of an activity's rule and template were a fifth of the flood's samples). Activities with
/// the same `active_when` share one condition, evaluated once per context.
struct ActivityFacts: Sendable {
    /// Per activity, by position.
    struct Facts: Sendable {
        /// Its `active_when`'s index in `conditions`.
        let condition: Int32
        /// How many targets it pushes to.
        let targets: Int32
        /// Whether a change starts its debounce again (a debounce is set).
        let restartsDebounce: Bool
        /// Whether it has an Island Pulse status whose turn to `failed` is urgent.
        let hasStatus: Bool
    }

    let facts: [Facts]
    /// The distinct `active_when` templates, by their text.
    let conditions: [Template]

    init(_ activities: [ActivityRule]) {
        var slots: [String: Int32] = [:]
        var conditions: [Template] = []
        var facts: [Facts] = []
        facts.reserveCapacity(activities.count)
        for rule in activities {
            let slot: Int32
            if let known = slots[rule.activeWhen.source] {
                slot = known
            } else {
                slot = Int32(conditions.count)
                slots[rule.activeWhen.source] = slot
                conditions.append(rule.activeWhen)
            }
            facts.append(Facts(condition: slot, targets: Int32(rule.targets.count),
                               restartsDebounce: rule.budget.debounce != .zero, hasStatus: rule.hasStatus))
        }
        self.facts = facts
        self.conditions = conditions
    }

    /// The values of the conditions in one context, each evaluated at most once.
    struct Values {
        private let conditions: [Template]
        private var known: [Result<Bool, EvaluationError>?]

        init(_ facts: ActivityFacts) {
            conditions = facts.conditions
            known = Array(repeating: nil, count: facts.conditions.count)
        }

        mutating func value(of condition: Int32, in context: EvaluationContext) -> Result<Bool, EvaluationError> {
            let index = Int(condition)
            if let value = known[index] { return value }
            let value = ActivityRenderer.isActive(conditions[index], in: context)
            known[index] = value
            return value
        }
    }
}
