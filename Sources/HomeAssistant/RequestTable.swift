import JSON
import WebSocketTransport

/// The commands sent on one socket that wait for their results, by id. Each socket has its own table, so a result
/// can only reach a request of the socket it came on; ids go on from the previous socket's, strictly increasing
/// (Home Assistant requires it within a socket; across them it keeps logs unambiguous).
struct RequestTable {
    /// A command waiting for its result. It is finished once: by its result, its time-out, or the link's end.
    final class Request {
        let command: [String: JSONValue]
        private let completion: (Result<JSONValue, HomeAssistantError>) -> Void
        private(set) var isDone = false
        /// The time-out, cancelled when the result comes.
        var timer: WebSocketEventLoop.TimerToken?

        init(command: [String: JSONValue], completion: @escaping (Result<JSONValue, HomeAssistantError>) -> Void) {
            self.command = command
            self.completion = completion
        }

        func finish(_ result: Result<JSONValue, HomeAssistantError>) {
            guard !isDone else { return }
            isDone = true
            completion(result)
        }

        /// The command's `type`, for messages.
        var type: String { command["type"]?.stringValue ?? "command" }
    }

    /// The id the next request gets.
    private(set) var nextID: Int
    private var waiting: [Int: Request] = [:]

    init(firstID: Int = 1) { nextID = firstID }

    /// Numbers `request` and keeps it until its result; returns its id and the frame to send.
    mutating func add(_ request: Request) -> (id: Int, frame: String) {
        let id = nextID
        nextID += 1
        var command = request.command
        command["id"] = .int(id)
        waiting[id] = request
        return (id, JSONValue.object(command).jsonText)
    }

    /// The request `id` answers, no longer waiting; nil if none waits (answered already, or never sent here).
    mutating func take(id: Int) -> Request? { waiting.removeValue(forKey: id) }

    func isWaiting(id: Int) -> Bool { waiting[id] != nil }

    /// Every waiting request, the table left empty: for failing them all.
    mutating func takeAll() -> [Request] {
        defer { waiting = [:] }
        return waiting.sorted { $0.key < $1.key }.map(\.value)
    }
}
