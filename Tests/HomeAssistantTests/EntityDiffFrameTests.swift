import HomeAssistant
import JSON
import Testing

/// Home Assistant's entity-change frames read in place (`EntityStore.applyDiffFrame`) must give exactly what the
/// general path gives (`ServerMessage.decode`, then `EntityStore.apply` for each event of the subscription), take
/// the frames Home Assistant writes, and decline every other frame whole, with nothing applied.
struct EntityDiffFrameTests {
    static let snapshot = #"{"a":{"sensor.a":{"s":"1","a":{"old":true,"unit":"W","t":0},"lc":1795343600.0},"sensor.b":{"s":"x","lc":1795343600.0}}}"#

    static func store() throws -> EntityStore {
        var store = EntityStore()
        _ = try store.replace(withSnapshot: JSONText(snapshot))
        return store
    }

    /// As Home Assistant 2026.11 writes it: the cached message, then the subscriber's id appended.
    static func event(_ diff: String, id: Int = 7) -> String { #"{"type":"event","event":{"c":\#(diff)},"id":\#(id)}"# }
    /// As older releases (and the bench's server) write it: the id first.
    static func idFirst(_ diff: String, id: Int = 7) -> String { #"{"id":\#(id),"type":"event","event":{"c":\#(diff)}}"# }

    /// In place, and through the general path.
    static func both(_ frame: String) throws -> (taken: Bool, fast: EntityStore, fastChanges: [EntityChange],
                                                  general: EntityStore, generalChanges: [EntityChange]) {
        var fast = try store(), general = try store()
        var fastChanges: [EntityChange] = []
        let bytes = Array(frame.utf8)
        let taken = bytes.withUnsafeBufferPointer { fast.applyDiffFrame($0, subscriptionID: 7, into: &fastChanges) }
        var generalChanges: [EntityChange] = []
        if let messages = try? ServerMessage.decode(frame: bytes) {
            for case .event(7, let text) in messages { generalChanges += (try? general.apply(text)) ?? [] }
        }
        return (taken, fast, fastChanges, general, generalChanges)
    }

    /// What Home Assistant writes, and other spellings of the same diff: taken, and the same as the general path.
    @Test(arguments: [
        event(#"{"sensor.a":{"+":{"s":"2","lc":1795343700.0,"c":"01CTX","a":{"t":1.5,"unit":"%"}},"-":{"a":["old"]}}}"#),
        event(#"{"sensor.a":{"+":{"lu":1795343701.0,"c":{"id":"01X","parent_id":null,"user_id":"u"}}}}"#),
        event(#"{"sensor.a":{"+":{"s":"2","s":"3","a":{"t":1},"a":{"t":2,"new":[1,{"k":"v"}]}}}}"#),
        event(#"{"sensor.a":{"-":{"a":["unit","nope"]},"+":{"s":null,"lc":"soon","lu":1e999}}}"#),
        event(#"{"sensor.a":{ "\u002b" : { "\u0073" : "4" , "x" : [ 1 , 2 ] , "a" : { } } , "other" : 1 }}"#),
        event(#"{"sensor.a":{"+":{}}}"#),
        event(#"{"sensor.a":{}}"#),
        event(#"{"sensor.a":"not a diff"}"#),
        event(#"{"sensor.unknown":{"+":{"s":"1"}}}"#),
        event(#"{"sensor.\u0061":{"+":{"s":"escaped id"}}}"#),
        event(#"{"sensor.a":{"+":{"s":"caf\u00e9 ☕ \ud83d\ude00","a":{"naïve":"ü"}}}}"#),
        " \n" + event(#"{"sensor.a":{"+":{"s":"5"}}}"#) + " \t",
        "[" + event(#"{"sensor.a":{"+":{"s":"6"}}}"#) + "," + event(#"{"sensor.b":{"+":{"s":"y"}}}"#) + ","
            + event(#"{"sensor.a":{"+":{"s":"7"},"-":{"a":["t"]}}}"#) + "]",
        "[ " + event(#"{"sensor.a":{"+":{"s":"8"}}}"#) + " ]",
        #"{"id": 7 ,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"9"}}}}}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"9"}}}},"id": 7 }"#,
        idFirst(#"{"sensor.a":{"+":{"s":"2","lc":1795343700.0,"c":"01CTX","a":{"t":1.5,"unit":"%"}},"-":{"a":["old"]}}}"#),
        "[" + idFirst(#"{"sensor.a":{"+":{"s":"6"}}}"#) + "," + event(#"{"sensor.b":{"+":{"s":"y"}}}"#) + "]",
    ])
    func homeAssistantsFramesAreTakenAsTheGeneralPathReadsThem(_ frame: String) throws {
        let result = try Self.both(frame)
        #expect(result.taken, "not taken: \(frame)")
        #expect(result.fastChanges == result.generalChanges, "\(frame)")
        #expect(result.fast.states == result.general.states, "\(frame)")
    }

    /// Applied as a connection that lends its states applies them (ids handed on, the store the states' only holder,
    /// changed in place): the same states, and the same entities changed in the same order.
    @Test(arguments: [
        event(#"{"sensor.a":{"+":{"s":"2","lc":1795343700.0,"c":"01CTX","a":{"t":1.5,"unit":"%"}},"-":{"a":["old"]}}}"#),
        event(#"{"sensor.a":{"+":{"s":"2","s":"3","a":{"t":1},"a":{"t":2,"new":[1,{"k":"v"}]}}}}"#),
        event(#"{"sensor.a":{"+":{"s":"2","a":{"t":1,"unit":"V","t":3}}}}"#),
        event(#"{"sensor.a":{"-":{"a":["unit","nope"]},"+":{"s":null,"lc":"soon","lu":1e999}}}"#),
        event(#"{"sensor.b":{"+":{"a":{"first":1}}}}"#),
        "[" + event(#"{"sensor.a":{"+":{"s":"6","a":{"t":6}}}}"#) + "," + event(#"{"sensor.b":{"+":{"s":"y"}}}"#) + ","
            + event(#"{"sensor.a":{"+":{"s":"7","a":{"t":7}}}}"#) + "," + event(#"{"sensor.a":{"+":{"a":{"unit":"kW"}},"-":{"a":["t"]}}}"#) + "]",
    ])
    func framesAppliedLeavingTheirStatesInTheStoreAreTheSame(_ frame: String) throws {
        let result = try Self.both(frame)
        var lending = try Self.store()
        lending.isLent = true
        var changes: [EntityChange] = []
        let taken = Array(frame.utf8).withUnsafeBufferPointer { lending.applyDiffFrame($0, subscriptionID: 7, into: &changes) }
        #expect(taken)
        #expect(changes == result.generalChanges.map(\.withoutState), "\(frame)")
        #expect(lending.states == result.general.states, "\(frame)")
    }

    /// A diff that changes values only, to a state the store alone holds, changes it where it is: no new allocation.
    /// One held elsewhere too (a change on its way) is copied first and stays as it was.
    @Test func aStateTheStoreAloneHoldsIsChangedInPlace() throws {
        var store = try Self.store()
        store.isLent = true
        let before = try #require(store["sensor.a"]).storageIdentity
        var changes: [EntityChange] = []
        let frame = Array(Self.event(#"{"sensor.a":{"+":{"s":"2","lc":1795343700.0,"c":"01CTX","a":{"t":1.5,"unit":"%"}}}}"#).utf8)
        #expect(frame.withUnsafeBufferPointer { store.applyDiffFrame($0, subscriptionID: 7, into: &changes) })
        let after = try #require(store["sensor.a"])
        #expect(after.storageIdentity == before, "changed in place")
        #expect(after.state == "2" && after.lastChanged == 1795343700.0 && after.lastUpdated == 1795343700.0)
        #expect(after.attributes == ["old": true, "unit": "%", "t": 1.5])
        let held = after
        let again = Array(Self.event(#"{"sensor.a":{"+":{"s":"3","a":{"t":2}}}}"#).utf8)
        #expect(again.withUnsafeBufferPointer { store.applyDiffFrame($0, subscriptionID: 7, into: &changes) })
        #expect(try #require(store["sensor.a"]).storageIdentity != held.storageIdentity, "copied: someone else holds it")
        #expect(held.state == "2" && held.attribute("t") == .double(1.5))
        #expect(store["sensor.a"]?.state == "3" && store["sensor.a"]?.attribute("t") == .int(2))
        #expect(changes == [.changed(entityID: "sensor.a"), .changed(entityID: "sensor.a")])
    }

    /// Anything else is declined whole, nothing applied: another subscription, another message, another layout of
    /// the envelope, more than one entity, malformed JSON anywhere, a malformed element after good ones.
    @Test(arguments: [
        event(#"{"sensor.a":{"+":{"s":"2"}}}"#, id: 8),
        idFirst(#"{"sensor.a":{"+":{"s":"2"}}}"#, id: 8),
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":7,"id":8}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":7,"x":1}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":"7"}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}},"r":[]},"id":7}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":7"#,
        "[" + event(#"{"sensor.a":{"+":{"s":"2"}}}"#) + "," + event(#"{"sensor.b":{"+":{"s":"y"}}}"#, id: 8) + "]",
        #"{"id":07,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"id":7.0,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"id":7e0,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"id":-7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"id":70000000000000000000000,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":07}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":7.0}"#,
        #"{"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":70000000000000000000000}"#,
        #"{"type":"event","id":7,"event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}"#,
        #"{"id":7,"type":"result","success":true,"result":null}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}},"id":8}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}},"sensor.b":{"+":{"s":"3"}}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}},"r":["sensor.b"]}}"#,
        #"{"id":7,"type":"event","event":{"a":{"sensor.c":{"s":"2"}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2","a":{"t":01}}}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2\u00"}}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"},}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2" "a":{}}}}}}"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.a":{"+":{"s":"2"}}}}} x"#,
        #"{"id":7,"type":"event","event":{"c":{"sensor.unknown":{"+":{"s":tru}}}}}"#,
        "[]",
        "[" + event(#"{"sensor.a":{"+":{"s":"2"}}}"#) + "," + #"{"id":7,"type":"result","success":true,"result":null}"# + "]",
        "[" + event(#"{"sensor.a":{"+":{"s":"2"}}}"#) + "," + event(#"{"sensor.b":{"+":{"s":"y"}}"#) + "]",
        "[" + event(#"{"sensor.a":{"+":{"s":"2"}}}"#) + "," + event(#"{"sensor.b":{"+":{"s":"y"}}}"#),
        "[" + event(#"{"sensor.a":{"+":{"s":"2"}}}"#) + ",]",
        "",
        "{",
    ])
    func everyOtherFrameIsDeclinedWhole(_ frame: String) throws {
        var store = try Self.store()
        var changes: [EntityChange] = [.removed(entityID: "kept")]
        let taken = Array(frame.utf8).withUnsafeBufferPointer { store.applyDiffFrame($0, subscriptionID: 7, into: &changes) }
        #expect(!taken, "taken: \(frame)")
        #expect(changes == [.removed(entityID: "kept")], "\(frame)")
        #expect(store.states == (try Self.store()).states, "\(frame)")
        #expect(store.heldDiffValues == 0, "what a declined frame's diffs read is not kept: \(frame)")
    }

    /// A coalesced array mixing diffs with other messages: each message's part in order — a diff read (what was read
    /// of one that turns out not to be a diff is forgotten), a diff of an entity not kept, any other valid message by
    /// its bytes. Malformed JSON anywhere, or no diff at all, and nothing is kept.
    @Test func aMixedArrayIsReadIntoItsPartsInOrder() throws {
        var store = try Self.store()
        let messages = [
            Self.event(#"{"sensor.a":{"+":{"s":"2"}}}"#),
            #"{"id":9,"type":"event","event":{"result":"Dryer"}}"#,
            Self.event(#"{"sensor.a":{"+":{"s":"3"}},"sensor.b":{"+":{"s":"4"}}}"#),
            Self.event(#"{"sensor.unknown":{"+":{"s":"1"}}}"#),
            "[1,2]",
            Self.idFirst(#"{"sensor.b":{"+":{"s":"6"}}}"#),
        ]
        let frame = Array(("[" + messages.joined(separator: ", ") + "]").utf8)
        let parts = try #require(frame.withUnsafeBufferPointer { store.readDiffFrame($0, subscriptionID: 7) })
        #expect(parts.map(\.range).map { String(decoding: frame[$0], as: UTF8.self).trimmingSuffix() } == messages)
        #expect(parts.map { part -> String in
            switch part {
            case .diff(let position, _): "diff \(position)"
            case .notKept: "not kept"
            case .other: "other"
            }
        } == ["diff 0", "other", "other", "not kept", "other", "diff 1"])
        #expect(store.applyFrameDiff(0) == .updated(try #require(store["sensor.a"])) && store["sensor.a"]?.state == "2")
        #expect(store.applyFrameDiff(1).entityID == "sensor.b" && store["sensor.b"]?.state == "6")
        store.endFrame(parts)
        #expect(store.heldDiffValues == 0)
        for declined in ["[" + messages[1] + "]", "[" + messages[0] + ", {]", "[" + messages[0] + ", " + messages[1]] {
            let before = store.states
            #expect(Array(declined.utf8).withUnsafeBufferPointer { store.readDiffFrame($0, subscriptionID: 7) } == nil, "\(declined)")
            #expect(store.states == before && store.heldDiffValues == 0)
        }
    }

    /// A frame of many diffs, then a small one: the room kept between frames never carries a diff over.
    @Test func diffsOfOneFrameDoNotLeakIntoTheNext() throws {
        var store = try Self.store()
        var changes: [EntityChange] = []
        let many = "[" + (0..<300).map { n in Self.event(#"{"sensor.a":{"+":{"s":"\#(n)","a":{"n\#(n)":\#(n)}}}}"#) }
            .joined(separator: ",") + "]"
        #expect(Array(many.utf8).withUnsafeBufferPointer { store.applyDiffFrame($0, subscriptionID: 7, into: &changes) })
        #expect(changes.count == 300 && store["sensor.a"]?.state == "299")
        #expect(store.heldDiffValues == 0)
        #expect(store["sensor.a"]?.attributes.count == 303)
        for n in 0..<3 {
            changes = []
            let one = Self.event(#"{"sensor.b":{"+":{"s":"b\#(n)"}}}"#)
            #expect(Array(one.utf8).withUnsafeBufferPointer { store.applyDiffFrame($0, subscriptionID: 7, into: &changes) })
            #expect(changes.map(\.entityID) == ["sensor.b"])
            #expect(store["sensor.b"]?.state == "b\(n)" && store["sensor.b"]?.attributes.isEmpty == true)
            #expect(store.heldDiffValues == 0, "room kept, values let go")
        }
        #expect(store["sensor.a"]?.state == "299")
    }
}

private extension String {
    /// Without the spaces a frame puts after a message.
    func trimmingSuffix() -> String { String(reversed().drop { $0 == " " }.reversed()) }
}
