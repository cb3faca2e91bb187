import JSON

/// One message from Home Assistant. A frame holds one message, or a JSON array of them when
/// `coalesce_messages` is on; `ServerMessage.decode(frame:)` handles both.
public enum ServerMessage: Sendable, Equatable {
    case authRequired(version: String?)
    case authOK(version: String?)
    case authInvalid(message: String)
    case result(id: Int, Result<JSONValue, HomeAssistantError>)
    case event(id: Int, JSONValue)
    case pong(id: Int)
    /// A message this client does not act on (an unknown type, or a known type missing its fields).
    case other(JSONValue)

    public static func decode(frame: [UInt8]) throws -> [ServerMessage] {
        let value = try JSONParser.parse(frame)
        if case .array(let messages) = value { return messages.map(decode(message:)) }
        return [decode(message: value)]
    }

    public static func decode(message: JSONValue) -> ServerMessage {
        guard let type = message["type"]?.stringValue else { return .other(message) }
        let id = message["id"]?.intValue
        switch (type, id) {
        case ("auth_required", _): return .authRequired(version: message["ha_version"]?.stringValue)
        case ("auth_ok", _): return .authOK(version: message["ha_version"]?.stringValue)
        case ("auth_invalid", _): return .authInvalid(message: message["message"]?.stringValue ?? "invalid access token")
        case ("pong", let id?): return .pong(id: id)
        case ("event", let id?): return .event(id: id, message["event"] ?? .null)
        case ("result", let id?):
            if message["success"]?.boolValue == true {
                return .result(id: id, .success(message["result"] ?? .null))
            }
            let error = message["error"]
            return .result(id: id, .failure(HomeAssistantError(
                code: error?["code"]?.stringValue ?? "unknown_error",
                message: error?["message"]?.stringValue ?? "no message")))
        default: return .other(message)
        }
    }
}
