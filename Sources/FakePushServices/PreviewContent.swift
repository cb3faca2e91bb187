import JSON
import LiveActivity

/// What the preview draws is checked first with the daemon's own schemas: the preview server takes pushes from anyone
/// who reaches its port, and a payload LiveBridge would never send (markup in a colour, a progress of 1e300) is
/// refused, not drawn.
enum PreviewContent {
    /// The problems of a pushed body, each naming its field; nil for a request that carries nothing to draw (PushWard's
    /// creation, a path no service has).
    static func problems(method: String, path: String, body: JSONValue?) -> [PayloadIssue]? {
        guard let fake = FakePushService.fake(method: method, path: path), fake.draws(method: method, path: path) else { return nil }
        guard let body, body.objectValue != nil else { return [PayloadIssue(path: "", "the body is not a JSON object")] }
        return fake.problems(body)
    }
}
