/// A service's request allowance over a rolling window (ActivitySmith: 60 requests a minute per key), kept on our
/// side so a burst waits its turn instead of drawing 429s. Pure arithmetic on the times it is given.
public struct RequestWindow: Sendable, Equatable {
    public let limit: Int
    public let seconds: Double
    /// When the requests of the last window were (or are booked to be) sent, oldest first.
    private(set) var sent: [Double] = []

    public init(limit: Int, seconds: Double) {
        precondition(limit > 0 && seconds > 0, "a window allows at least one request over some time")
        self.limit = limit
        self.seconds = seconds
    }

    /// Books a request asked for at `now` and returns how long it waits first (0: at once). A booked request counts
    /// from the moment it will be sent, so callers asking together are spread over the window.
    public mutating func book(at now: Double) -> Double {
        sent.removeAll { $0 <= now - seconds }
        let at = sent.count < limit ? now : max(now, sent[sent.count - limit] + seconds)
        sent.append(at)
        return at - now
    }
}
