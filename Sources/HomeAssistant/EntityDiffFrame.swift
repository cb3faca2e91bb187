import JSON

/// Home Assistant's commonest frame by far: `subscribe_entities` changes of one entity each, exactly as its WebSocket
/// writer frames them — `{"type":"event","event":{"c":{"sensor.x":{"+":{…}}}},"id":7}` (2026.11's
/// `cached_state_diff_message`: the cached message, then the subscriber's id appended), alone or several in one JSON
/// array for `coalesce_messages`. The id-first layout of older releases (`event_message`'s dictionary order) is taken
/// too. Read in one strict pass straight from the socket's buffer: no envelope, no copy of the frame, no second
/// reading of the event.
///
/// Any other message, member order or spacing of the envelope is for the general path (`ServerMessage.decode`), which
/// reads everything: this one only has to be right when it accepts a frame, and it accepts one only whole. (A frame
/// declined after most of it was read is read again there: at most twice the reading, for a frame Home Assistant
/// does not send.)
enum EntityDiffFrame {
    /// Calls `diff` for each message in order, with the entity's id and the reader at that entity's diff, which `diff`
    /// reads or skips whole (strictly). False as soon as a message is anything but one entity's diff for
    /// `subscriptionID`, or is malformed: the caller must then apply none of what `diff` was given.
    static func read(_ frame: UnsafeBufferPointer<UInt8>, subscriptionID: Int,
                     _ diff: (inout JSONReader, JSONKey) throws -> Void) -> Bool {
        var reader = JSONReader(frame)
        do {
            if reader.consume("[") {
                repeat {
                    guard try message(&reader, subscriptionID: subscriptionID, diff) else { return false }
                } while reader.consume(",")
                guard reader.consume("]") else { return false }
            } else {
                guard try message(&reader, subscriptionID: subscriptionID, diff) else { return false }
            }
            return reader.isAtEnd
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
