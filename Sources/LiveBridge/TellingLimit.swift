/// How many problems with automation events are told a minute: each is a warning and a persistent notification in
/// Home Assistant, and an automation gone wrong (or a hostile one) can fire thousands a second, each naming another
/// activity. The first `perWindow` of a window are told; the rest are counted and said once, as a number, when the next
/// window's first arrives.
struct TellingLimit {
    let perWindow: Int
    /// Seconds.
    let window: Double
    private var windowStart = -Double.infinity
    private var told = 0
    private var heldBack = 0

    init(perWindow: Int = 10, window: Double = 60) {
        self.perWindow = perWindow
        self.window = window
    }

    /// Whether the problem arriving at `now` (seconds) is told, and how many were held back in the window before it.
    mutating func admit(at now: Double) -> (tell: Bool, heldBackBefore: Int) {
        var before = 0
        if !(now >= windowStart && now < windowStart + window) {
            // A new window (or the clock stepped back): the count held back so far is said now.
            before = heldBack
            windowStart = now
            told = 0
            heldBack = 0
        }
        guard told < perWindow else {
            heldBack += 1
            return (false, before)
        }
        told += 1
        return (true, before)
    }
}
