import HomeAssistant
import JSON
import Testing

struct ServerMessageTests {
    func decode(_ text: String) throws -> [ServerMessage] { try ServerMessage.decode(frame: Array(text.utf8)) }

    @Test func aFrameHoldsOneMessage() throws {
        #expect(try decode(#"{"type":"auth_required","ha_version":"2025.4.4"}"#) == [.authRequired(version: "2025.4.4")])
    }

    @Test func aCoalescedFrameHoldsAnArrayOfMessagesInOrder() throws {
        let messages = try decode(#"[{"id":2,"type":"result","success":true,"result":null},{"type":"event","event":{"a":{}},"id":2}]"#)
        #expect(messages == [.result(id: 2, .success(.null)), .event(id: 2, ["a": [:]])])
    }

    @Test func anErrorResultCarriesCodeAndMessage() throws {
        let messages = try decode(#"{"id":5,"type":"result","success":false,"error":{"code":"not_found","message":"Service not found.","translation_key":"x","translation_placeholders":{}}}"#)
        #expect(messages == [.result(id: 5, .failure(HomeAssistantError(code: "not_found", message: "Service not found.")))])
    }

    @Test func authAndPongMessages() throws {
        #expect(try decode(#"{"type":"auth_ok","ha_version":"2025.4.4"}"#) == [.authOK(version: "2025.4.4")])
        #expect(try decode(#"{"type":"auth_invalid","message":"Invalid access token or password"}"#)
                == [.authInvalid(message: "Invalid access token or password")])
        #expect(try decode(#"{"id":9,"type":"pong"}"#) == [.pong(id: 9)])
    }

    @Test func unknownTypesAreOtherAndMalformedFramesThrow() throws {
        #expect(try decode(#"{"type":"something_new"}"#) == [.other(["type": "something_new"])])
        #expect(throws: JSONParser.SyntaxError.self) { try decode(#"{"type":"#) }
    }
}
