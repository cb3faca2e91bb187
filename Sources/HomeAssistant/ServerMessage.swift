public import JSON

/// One message from Home Assistant. A frame holds one message, or a JSON array of them when
/// `coalesce_messages` is on; `ServerMessage.decode(frame:)` handles both.
public enum ServerMessage: Sendable, Equatable {
    case authRequired(version: String?)
    case authOK(version: String?)
    case authInvalid(message: String)
    case result(id: Int, Result<JSONValue, HomeAssistantError>)
    /// An event of a subscription: its payload as text, for the subscriber to read.
    case event(id: Int, JSONText)
    case pong(id: Int)
    /// A message this client does not act on (an unknown type, or a known type missing its fields).
    case other(JSONValue)

    /// Reads the envelope of each message (`id`, `type`, `success`, …) and leaves an event's payload as text, neither
    /// decoded nor checked: its subscriber knows its shape and reads it, strictly, straight into its own types — one
    /// pass over the bytes that matter most. The rest of the frame is checked here.
    public static func decode(frame: [UInt8]) throws -> [ServerMessage] {
        try frame.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            var messages: [ServerMessage] = []
            if reader.nextKind == .array {
                try reader.readArray { reader in messages.append(try decode(&reader, frame: frame)) }
            } else {
                messages.append(try decode(&reader, frame: frame))
            }
            try reader.expectEnd()
            return messages
        }
    }

    /// Whether handling this message leaves the entities and the entity subscription `subscriptionID` as they are:
    /// another subscription's event (a template's rendering, an automation's event) or a pong. Anything else — the
    /// subscription's own event, a result whose callback may resubscribe, an auth message — may change them: a diff
    /// read in place before it must then be handled after it the general way.
    public func leavesEntitiesAsTheyAre(subscriptionID: Int) -> Bool {
        switch self {
        case .event(let id, _): id != subscriptionID
        case .pong: true
        default: false
        }
    }

    /// One message of a frame, alone (its bytes copied: an event keeps them as its text). An array here is one
    /// message that is not an object (`.other`), as it is inside a coalesced frame.
    public static func decode(message: UnsafeBufferPointer<UInt8>) throws -> ServerMessage {
        let bytes = Array(message)
        return try bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer)
            let decoded = try decode(&reader, frame: bytes)
            try reader.expectEnd()
            return decoded
        }
    }

    private static func decode(_ reader: inout JSONReader, frame: [UInt8]) throws -> ServerMessage {
        guard reader.nextKind == .object else { return .other(try reader.readValue()) }
        let start = reader.offset
        var envelope = Envelope()
        try reader.readMembers { reader, key in
            switch key {
            case "type": envelope.type = try reader.readStringIfPresent()
            case "id": envelope.id = try reader.readValue().intValue
            case "event": envelope.event = reader.skipValueRangeUnchecked()
            case "result": envelope.result = try reader.readValue()
            case "success": envelope.success = try reader.readValue().boolValue
            case "error": envelope.error = try reader.readValue()
            case "ha_version": envelope.version = try reader.readStringIfPresent()
            case "message": envelope.message = try reader.readStringIfPresent()
            default: try reader.skipValue()
            }
        }
        switch (envelope.type, envelope.id) {
        case ("auth_required", _): return .authRequired(version: envelope.version)
        case ("auth_ok", _): return .authOK(version: envelope.version)
        case ("auth_invalid", _): return .authInvalid(message: envelope.message ?? "invalid access token")
        case ("pong", let id?): return .pong(id: id)
        case ("event", let id?):
            return .event(id: id, envelope.event.map { JSONText(frame[$0]) } ?? JSONText("null"))
        case ("result", let id?):
            if envelope.success == true { return .result(id: id, .success(envelope.result ?? .null)) }
            return .result(id: id, .failure(HomeAssistantError(
                code: envelope.error?["code"]?.stringValue.map(HomeAssistantError.Code.init(rawValue:)) ?? .unknownError,
                message: envelope.error?["message"]?.stringValue ?? "no message")))
        default:
            // Rare: the whole message, as a tree.
            var whole = reader.subreader(start..<reader.offset)
            return .other(try whole.readValue())
        }
    }

    /// The fields of a message this client acts on.
    private struct Envelope {
        var type: String?
        var id: Int?
        var event: Range<Int>?
        var result: JSONValue?
        var success: Bool?
        var error: JSONValue?
        var version: String?
        var message: String?
    }
}
