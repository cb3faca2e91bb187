import HomeAssistant
import JSON
import Testing

/// A surrogate escape without its pair in an entity's text (a hostile or broken server's: Home Assistant's own
/// orjson cannot write one) is U+FFFD. Before, it refused the whole message: the snapshot of every entity, so the
/// daemon reconnected for ever, and the error did not say which entity.
struct LoneSurrogateTests {
    @Test func theSnapshotIsTakenWithTheReplacementCharacter() throws {
        var store = EntityStore()
        let snapshot = #"{"a":{"sensor.x":{"s":"a\ud800","a":{"friendly_name":"W\udc00","list":["\ud800\u0041"]},"lc":1.0},"#
            + #""sensor.\ud800":{"s":"odd id","lc":1.0},"sensor.y":{"s":"ok","lc":1.0}}}"#
        _ = try store.replace(withSnapshot: JSONText(snapshot))
        #expect(store["sensor.x"]?.state == "a\u{FFFD}")
        #expect(store["sensor.x"]?.attributes["friendly_name"] == .string("W\u{FFFD}"))
        #expect(store["sensor.x"]?.attributes["list"] == .array([.string("\u{FFFD}A")]))
        #expect(store["sensor.\u{FFFD}"]?.state == "odd id")
        #expect(store["sensor.y"]?.state == "ok")
    }

    @Test func aDiffIsTakenInPlaceAndThroughTheGeneralPathAlike() throws {
        let frame = EntityDiffFrameTests.event(#"{"sensor.a":{"+":{"s":"\udfff!","a":{"t":"\ud83d\ude00\ud800"}}}}"#)
        let (taken, fast, fastChanges, general, generalChanges) = try EntityDiffFrameTests.both(frame)
        #expect(taken)
        #expect(fast["sensor.a"]?.state == "\u{FFFD}!")
        #expect(fast["sensor.a"]?.attributes["t"] == .string("😀\u{FFFD}"))
        #expect(fast["sensor.a"] == general["sensor.a"])
        #expect(fastChanges == generalChanges)
        // The envelope too: the frame is one valid message.
        #expect(try ServerMessage.decode(frame: Array(frame.utf8)).count == 1)
    }
}
