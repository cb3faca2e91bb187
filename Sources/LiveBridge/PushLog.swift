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
    /// A ring once full: `next` is where the oldest entry stands and the next one goes (no shifting per push).
    private struct Ring {
        var entries: [Entry] = []
        var next = 0
    }
    private let ring = Locked(Ring())

    init(capacity: Int = 100) { self.capacity = max(capacity, 1) }

    func append(_ entry: Entry) {
        ring.withLock { ring in
            if ring.entries.count < capacity {
                ring.entries.append(entry)
            } else {
                ring.entries[ring.next] = entry
                ring.next = (ring.next + 1) % capacity
            }
        }
    }

    /// Oldest first.
    var recent: [Entry] {
        ring.withLock { ring in Array(ring.entries[ring.next...] + ring.entries[..<ring.next]) }
    }
}

extension PushLog.Entry {
    /// As the preview page's log shows it: when, which activity at which target, and what became of the push (or
    /// what the budget decided).
    var pageJSON: JSONValue {
        .object(["at": .double(at), "activity": .string("\(activity) · \(backend)"),
                 "decision": .string(kind == "budget" ? outcome : "\(kind) \(outcome) (\(status))"), "ended": .bool(kind == "end")])
    }
}
