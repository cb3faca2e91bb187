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
    /// Each condition's quick form (`has_value('id')`, `is_state('id', 'on')`), tested from this table without
    /// loading the template.
    let quickTests: [Template.QuickTest?]

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
        quickTests = conditions.map(\.quickTest)
    }

    /// The values of the conditions in one context, each evaluated at most once. Kept by the engine from one context
    /// to the next (`begin` starts another): a change that reaches one activity costs no array sized to every rule.
    struct Values {
        private var known: [Result<Bool, EvaluationError>?] = []
        private var stamps: [UInt32] = []
        private var stamp: UInt32 = 0

        /// A new context: every value known so far is stale.
        mutating func begin(_ facts: ActivityFacts) {
            if known.count != facts.conditions.count {
                known = Array(repeating: nil, count: facts.conditions.count)
                stamps = Array(repeating: 0, count: facts.conditions.count)
                stamp = 0
            }
            stamp &+= 1
            if stamp == 0 {
                stamps = Array(repeating: 0, count: stamps.count)
                stamp = 1
            }
        }

        mutating func value(of condition: Int32, in facts: ActivityFacts, context: EvaluationContext) -> Result<Bool, EvaluationError> {
            let index = Int(condition)
            if stamps[index] == stamp, let value = known[index] { return value }
            let value = facts.quickTests[index].map { Result.success($0.holds(in: context)) }
                ?? ActivityRenderer.isActive(facts.conditions[index], in: context)
            known[index] = value
            stamps[index] = stamp
            return value
        }
    }
}
