import PreviewServer
import HTTPClient
import JSON
import Testing

/// The preview server (`livebridge preview-server`, the demo) takes pushes from anyone on its port: it checks them with
/// the daemon's own schemas and draws only what they accept.
@Suite(.timeLimit(.minutes(1)))
struct PreviewServerTests {
    func patch(_ server: PreviewServer, _ path: String, _ body: String) async throws -> HTTPResponse {
        try await HTTPClient().send(HTTPRequest(method: "PATCH", url: server.baseURL + path, headers: [("Authorization", "Token anything")],
                                                body: Array(body.utf8)))
    }

    @Test func aPayloadTheSchemasRefuseIsAnsweredAndNotDrawn() async throws {
        let server = try PreviewServer()
        let bad = try await patch(server, "/activity/washer", #"{"state":"ONGOING","content":{"template":"generic","progress":1e300}}"#)
        #expect(bad.status == 400)
        #expect(try JSONParser.parse(bad.body)["error"] == "INVALID_CONTENT")
        let good = try await patch(server, "/activity/dryer", #"{"state":"ONGOING","content":{"template":"generic","progress":0.5}}"#)
        #expect(good.status == 200)
        #expect(server.state["activities"]?.objectValue?.keys.sorted() == ["aivi/dryer"])
    }

    /// It stands in for the user's own services: a push with no token at all is taken and drawn (the screenshot check
    /// pushes so; the fake Aivi once asked for `Authorization: Token …` here too).
    @Test func aPushWithoutATokenIsTaken() async throws {
        let server = try PreviewServer()
        let response = try await HTTPClient().send(HTTPRequest(method: "PATCH", url: server.baseURL + "/activity/vacuum",
                                                               body: Array(#"{"state":"ONGOING","content":{"template":"generic","progress":0.5}}"#.utf8)))
        #expect(response.status == 200)
        #expect(server.state["activities"]?.objectValue?.keys.sorted() == ["aivi/vacuum"])
    }
}
