import JSON

/// Home Assistant's commonest frame by far: `subscribe_entities` changes of one entity each, exactly as its WebSocket
/// writer frames them — `{"type":"event","event":{"c":{"sensor.x":{"+":{…}}}},"id":7}` (2026.11's
/// `cached_state_diff_message`: the cached message, then the subscriber's id appended), alone or several in one JSON
/// array for `coalesce_messages`. The id-first layout of older releases (`event_message`'s dictionary order) is taken
/// too. Read in one strict pass straight from the socket's buffer: no envelope, no copy of the frame, no second
/// reading of the event.
///
/// In an array, any other message (a `render_template` event that came in the same tick as the diff it follows, a
/// result, a diff laid out otherwise) is checked as JSON and handed on as its bytes, for the caller to decode alone
/// and handle in its place. A single message of another shape, or malformed JSON anywhere, is for the general path
/// (`ServerMessage.decode`), which reads everything: this one only has to be right when it accepts a frame, and it
/// accepts one only whole. (A frame declined after most of it was read is read again there: at most twice the
/// reading, for a frame Home Assistant does not send.)
enum EntityDiffFrame {
    /// One message of a frame, where it stands in the frame.
    enum Element {
        /// One entity's diff for the subscription, read by the `diff` callback.
        case diff(Range<Int>)
        /// Any other message (valid JSON), not read.
        case other(Range<Int>)
    }

    /// Calls `diff` with the entity's id and the reader at that entity's diff, which `diff` reads or skips whole
    /// (strictly); then `element` for each message in order, saying what it was. An array's message that turns out
    /// not to be a diff after `diff` was called for it (a second entity, a wrong type inside) is given as `.other`:
    /// the caller forgets what `diff` read of it. False when the frame is malformed, or is a single message that is
    /// not a diff, or an array with no diff: the caller must then apply none of what it was given.
    static func read(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int,
                     diff: (inout JSONReader, JSONKey) throws -> Void, element: (Element) -> Void) -> Bool {
        var reader = JSONReader(frame)
        do {
            guard reader.consume("[") else {
                guard try message(&reader, subscriptionID: subscriptionID, diff), reader.isAtEnd else { return false }
                element(.diff(0..<frame.count))
                return true
            }
            var diffs = 0
            repeat {
                let start = reader.offset
                let isDiff: Bool
                do { isDiff = try message(&reader, subscriptionID: subscriptionID, diff) } catch { isDiff = false }
                if isDiff {
                    diffs += 1
                    element(.diff(start..<reader.offset))
                } else {
                    // Read again as plain JSON from its start: it must be a valid value, then it is the caller's.
                    reader.rewind(to: start)
                    let range = try reader.skipValueRange()
                    element(.other(range))
                }
            } while reader.consume(",")
            return reader.consume("]") && reader.isAtEnd && diffs > 0
        } catch {
            return false
        }
    }

    /// One message: Home Assistant's envelope as its writer lays it out, one entity in `c`, nothing else. The diff is
    /// handed on before an id that comes last is seen: the caller applies nothing until the whole frame is accepted.
    private static func message(_ reader: inout JSONReader, subscriptionID: Int,
                                _ diff: (inout JSONReader, JSONKey) throws -> Void) throws -> Bool {
        if reader.consume(#"{"type":"event","event":{"c":{"#) {
            try diff(&reader, try reader.readKey())
            // The entity's object, `c`'s (a second entity is for the general path) and the event's, then the id.
            return reader.consume("}") && reader.consume("}") && reader.consume(#","id":"#)
                && reader.readPlainInteger() == subscriptionID && reader.consume("}")
        }
        guard reader.consume(#"{"id":"#), reader.readPlainInteger() == subscriptionID,
              reader.consume(#","type":"event","event":{"c":{"#) else { return false }
        try diff(&reader, try reader.readKey())
        return reader.consume("}") && reader.consume("}") && reader.consume("}")
    }
}
