import JSON

/// Home Assistant's commonest frame by far: `subscribe_entities` changes of one entity each, exactly as its WebSocket
/// writer frames them — `{"id":7,"type":"event","event":{"c":{"sensor.x":{"+":{…}}}}}` alone, or several of them in
/// one JSON array for `coalesce_messages`. Read in one strict pass straight from the socket's buffer: no envelope, no
/// copy of the frame, no second reading of the event.
///
/// Any other message, member order or spacing of the envelope is for the general path (`ServerMessage.decode`), which
/// reads everything: this one only has to be right when it accepts a frame, and it accepts one only whole.
enum EntityDiffFrame {
    /// Calls `diff` for each message in order, with the entity's id and the reader at that entity's diff, which `diff`
    /// reads or skips whole (strictly). False as soon as a message is anything but one entity's diff for
    /// `subscription`, or is malformed: the caller must then apply none of what `diff` was given.
    static func read(_ frame: UnsafeBufferPointer<UInt8>, subscription: Int,
                     _ diff: (inout JSONReader, JSONKey) throws -> Void) -> Bool {
        var reader = JSONReader(frame)
        do {
            if reader.consume("[") {
                repeat {
                    guard try message(&reader, subscription: subscription, diff) else { return false }
                } while reader.consume(",")
                guard reader.consume("]") else { return false }
            } else {
                guard try message(&reader, subscription: subscription, diff) else { return false }
            }
            return reader.isAtEnd
        } catch {
            return false
        }
    }

    /// One message: Home Assistant's envelope as its writer lays it out, one entity in `c`, nothing after it.
    private static func message(_ reader: inout JSONReader, subscription: Int,
                                _ diff: (inout JSONReader, JSONKey) throws -> Void) throws -> Bool {
        guard reader.consume(#"{"id":"#), reader.readPlainInteger() == subscription,
              reader.consume(#","type":"event","event":{"c":{"#) else { return false }
        try diff(&reader, try reader.readKey())
        // The entity's object, then `c`'s (a second entity is for the general path), the event's and the message's.
        return reader.consume("}") && reader.consume("}") && reader.consume("}")
    }
}
