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
        #expect(messages == [.result(id: 2, .success(.null)), .event(id: 2, JSONText(["a": [:]]))])
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

    /// An event's payload stays text, unchecked: its subscriber reads it strictly, so its bytes are read once. A bad
    /// payload throws when read; the rest of the frame is checked by `decode`.
    @Test func anEventPayloadIsLeftAsTextAndCheckedWhenRead() throws {
        let messages = try decode(#"{"id":3,"event":{"c":{"sensor.a":{"+":{"s":"on","lu":1.5}}}},"type":"event"}"#)
        guard case .event(3, let payload)? = messages.first else { Issue.record("\(messages)"); return }
        #expect(payload.description == #"{"c":{"sensor.a":{"+":{"s":"on","lu":1.5}}}}"#)
        #expect(try payload.value() == ["c": ["sensor.a": ["+": ["s": "on", "lu": 1.5]]]])
        var invalidUTF8 = Array(#"{"id":3,"type":"event","event":{"a":""}}"#.utf8)
        invalidUTF8.insert(0xC0, at: invalidUTF8.count - 3)
        for bad in [#"{"id":3,"type":"event","event":{"a":tru}}"#, #"{"id":3,"type":"event","event":{"a":"\x"}}"#,
                    #"{"id":3,"type":"event","event":{"a":01}}"#, #"{"id":3,"type":"event","event":{"a":[1,]}}"#,
                    #"{"id":3,"type":"event","event":]}"#].map({ Array($0.utf8) }) + [invalidUTF8] {
            let messages = try ServerMessage.decode(frame: bad)
            guard case .event(3, let payload)? = messages.first else { Issue.record("\(messages)"); continue }
            #expect(throws: JSONParser.SyntaxError.self, "\(payload)") { try payload.value() }
            #expect(throws: JSONParser.SyntaxError.self, "\(payload)") { try payload.checked() }
            var store = EntityStore()
            #expect(throws: JSONParser.SyntaxError.self, "\(payload)") { try store.apply(payload) }
        }
        // Whatever the payload holds, the envelope around it is still checked.
        for bad in [#"{"id":3,"type":"event","event":{"a":1}"#, #"{"id":3,"type":"event","event":{"a":1}},"#,
                    #"{"id":3,"type":"event","event":{"a":1} "x"}"#, #"{"id":3,"type":"event","event":{"a":"}"#] {
            #expect(throws: JSONParser.SyntaxError.self, "\(bad)") { try decode(bad) }
        }
    }

    @Test func unknownTypesAreOtherAndMalformedFramesThrow() throws {
        #expect(try decode(#"{"type":"something_new"}"#) == [.other(["type": "something_new"])])
        #expect(throws: JSONParser.SyntaxError.self) { try decode(#"{"type":"#) }
    }
}

/// Error codes are typed: Home Assistant's own, ours, and any other it sends kept as text.
struct HomeAssistantErrorCodeTests {
    @Test func codesFromTheWireAreTypedAndUnknownOnesKeepTheirText() throws {
        let frame = Array(#"[{"id":1,"type":"result","success":false,"error":{"code":"unauthorized","message":"Unauthorized"}},"#.utf8)
            + Array(#"{"id":2,"type":"result","success":false,"error":{"code":"brand_new_code","message":"?"}},"#.utf8)
            + Array(#"{"id":3,"type":"result","success":false,"error":{"message":"no code"}}]"#.utf8)
        let codes = try ServerMessage.decode(frame: frame).map { message -> HomeAssistantError.Code? in
            if case .result(_, .failure(let error)) = message { return error.code } else { return nil }
        }
        #expect(codes == [.unauthorized, HomeAssistantError.Code(rawValue: "brand_new_code"), .unknownError])
        let transient: [HomeAssistantError.Code] = [.disconnected, .timeout, .homeAssistantError, .unknownError]
        let final: [HomeAssistantError.Code] = [.unauthorized, .serviceValidationError, .notFound, "brand_new_code"]
        #expect(transient.map(\.isTransient) == [true, true, true, true])
        #expect(final.map(\.isTransient) == [false, false, false, false])
    }
}
