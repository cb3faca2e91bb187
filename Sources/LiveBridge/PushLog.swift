import FoundationEssentials
import JSON
import Platform

/// The last pushes the daemon made, newest last, for the status page's log: a bounded ring, so months of pushes hold a
/// few kilobytes. Written from the dispatcher's push callback, read by the status listener: behind a lock.
final class PushLog: Sendable {
    struct Entry: Sendable, Equatable {
        let at: Double
        let activity: String
        let backend: String
        let kind: String
        let outcome: String
        let status: String
    }

    let capacity: Int
    private let entries = Locked<[Entry]>([])

    init(capacity: Int = 100) { self.capacity = capacity }

    func append(_ entry: Entry) {
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    var recent: [Entry] { entries.withLock { $0 } }
}

extension PushLog.Entry {
    /// As the preview page's log shows it: when, which activity at which target, and what became of the push (or
    /// what the budget decided).
    var pageJSON: JSONValue {
        .object(["at": .double(at), "activity": .string("\(activity) · \(backend)"),
                 "decision": .string(kind == "budget" ? outcome : "\(kind) \(outcome) (\(status))"), "ended": .bool(kind == "end")])
    }
}
