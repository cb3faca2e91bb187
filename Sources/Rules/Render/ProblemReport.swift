public import LiveActivity

/// Says each activity's problem once, not once per state change: a sensor that stays `unavailable` for an hour
/// gives one log line, and a new line only when the problem changes or comes back after a clean render.
public struct ProblemReport: Sendable {
    private var current: [String: Set<PayloadIssue>] = [:]

    public init() {}

    /// How many activities have problems on record.
    public var count: Int { current.count }

    /// The problems of this render not yet reported for the activity; an empty list clears it.
    public mutating func newProblems(activity: String, _ problems: [PayloadIssue]) -> [PayloadIssue] {
        guard !problems.isEmpty else {
            if !current.isEmpty { current[activity] = nil }
            return []
        }
        let known = current[activity] ?? []
        current[activity] = Set(problems)
        var seen = Set<PayloadIssue>()
        return problems.filter { !known.contains($0) && seen.insert($0).inserted }
    }
}
