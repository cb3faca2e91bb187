/// Messages waiting to be written on one connection, cut into fragments of at most `fragmentSize`.
///
/// libwebsockets allows one write per WRITEABLE callback; a large message goes out as a first
/// fragment and continuations, so one socket never buffers megabytes at once.
struct OutgoingMessages {
    struct Fragment {
        let bytes: ArraySlice<UInt8>
        let isFirst: Bool
        let isLast: Bool
    }

    let fragmentSize: Int
    private var messages: [[UInt8]] = []
    private var head = 0
    private var offset = 0

    init(fragmentSize: Int) { self.fragmentSize = fragmentSize }

    var isEmpty: Bool { head == messages.count }

    mutating func append(_ message: [UInt8]) { messages.append(message) }

    /// The next fragment to write, consumed.
    mutating func next() -> Fragment? {
        guard head < messages.count else { return nil }
        let message = messages[head]
        let end = min(offset + fragmentSize, message.count)
        let fragment = Fragment(bytes: message[offset..<end], isFirst: offset == 0, isLast: end == message.count)
        offset = end
        if fragment.isLast {
            messages[head] = []
            head += 1
            offset = 0
            if head > 64 && head * 2 > messages.count {
                messages.removeFirst(head)
                head = 0
            }
        }
        return fragment
    }

    mutating func removeAll() {
        messages = []
        head = 0
        offset = 0
    }
}
