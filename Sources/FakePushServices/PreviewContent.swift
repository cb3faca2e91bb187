import JSON
import LiveActivity

/// What the preview draws is checked first with the daemon's own schemas: the preview server takes pushes from anyone
/// who reaches its port, and a payload LiveBridge would never send (markup in a colour, a progress of 1e300) is
/// refused, not drawn.
enum PreviewContent {
    /// The problems of a pushed body, each naming its field; nil for a request that carries nothing to draw (PushWard's
    /// creation, a path no service has).
    static func problems(method: String, path: String, body: JSONValue?) -> [PayloadIssue]? {
        let service: BackendKind
        if method == "PATCH", path.hasPrefix("/activity/") { service = .aivi }
        else if method == "POST", path == "/notify" { service = .islandpulse }
        else if method == "PATCH", path.hasPrefix("/activities/") { service = .pushward }
        else if method == "PUT" || method == "DELETE", path.hasPrefix("/live-activity/stream/") { service = .activitysmith }
        else { return nil }
        guard let body, body.objectValue != nil else { return [PayloadIssue(path: "", "the body is not a JSON object")] }
        return problems(body, service: service)
    }

    /// The problems of a body as `service` receives it.
    static func problems(_ body: JSONValue, service: BackendKind) -> [PayloadIssue] {
        switch service {
        case .aivi: return PayloadNormalizer.normalize(body["content"] ?? .null, as: AiviSchema.content, path: "content").1
        case .islandpulse: return PayloadNormalizer.normalize(body, as: .object(IslandPulseSchema.body)).1
        case .pushward:
            // A merge patch: a null clears a field, it is not one of the content's values.
            let content = body["content"]?.objectValue.map { JSONValue.object($0.filter { $0.value != .null }) } ?? body["content"] ?? .null
            return PayloadNormalizer.normalize(content, as: PushWardSchema.content, path: "content").1
        case .activitysmith:
            // The end's dismissal time is added by the request, after the schema's content.
            var state = body["content_state"]?.objectValue ?? [:]
            state["auto_dismiss_seconds"] = nil
            return PayloadNormalizer.normalize(.object(state), as: ActivitySmithSchema.contentState, path: "content_state").1
        default: return []  // Home Assistant's (drawn by the companion app), or a service the preview does not draw
        }
    }
}
