import JSON
import LiveActivity
import WebSocketTransport

/// Aivi as its reference documents it: `PATCH /activity/{slug}` with `Authorization: Token …` and `{state, content}`
/// (`ONGOING` or `IDLE`); the body echoed back.
extension AiviSchema: FakedService {
    static let testAccounts = ["aivi-test-token"]

    static func serves(method: String, path: String) -> Bool { method == "PATCH" && path.hasPrefix("/activity/") }
    static let routes = "PATCH /activity/SLUG"

    static func answer(_ request: HTTPServerRequest, _ body: JSONValue?, in fake: FakePushService) -> HTTPServerResponse {
        let header = request.headers["authorization"] ?? ""
        // The preview server takes any push, with or without a token (it stands in for the user's own services).
        guard fake.acceptsAnyToken || header.hasPrefix("Token ") && fake.plan(String(header.dropFirst(6)), at: .aivi) != nil else {
            return fake.error(401, "UNAUTHORIZED", "Invalid token")
        }
        guard let body, let state = body["state"]?.stringValue, ["ONGOING", "IDLE"].contains(state), body["content"]?.objectValue != nil
        else { return fake.error(400, "INVALID_BODY", "state and content are required") }
        fake.show("aivi/" + request.path.dropFirst("/activity/".count), body, ended: state == "IDLE")
        return HTTPServerResponse(status: 200, json: body.jsonText)
    }

    static func problems(_ body: JSONValue) -> [PayloadIssue] {
        PayloadNormalizer.normalize(body["content"] ?? .null, as: AiviSchema.content, path: "content").1
    }
}
