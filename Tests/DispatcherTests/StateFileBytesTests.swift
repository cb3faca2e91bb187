import ConnectionTestSupport
@testable import Dispatcher
import JSON
import LiveActivity
import Testing

/// The state file is written straight from the entries, without the JSON tree: byte for byte what the tree wrote.
struct StateFileBytesTests {
    /// The file as it was written through a JSON tree before (session 50): the reference the direct writer must equal.
    static func tree(_ state: DeliveryState) -> JSONValue {
        .object([
            "version": 1,
            "activities": .object(state.entries.mapValues { entry in
                var object: [String: JSONValue] = ["running": .bool(entry.running)]
                if let digest = entry.digest { object["digest"] = .string(digest) }
                if let d = entry.dismissal {
                    object["dismiss"] = ["target": .string(d.target), "body": d.body, "at": .double(d.at), "kind": .string(d.kind.rawValue),
                                         "method": .string(d.method)]
                }
                if let started = entry.started { object["started"] = .double(started) }
                if entry.dismissed { object["dismissed"] = true }
                return .object(object)
            }),
            "relays": .object(state.relays.filter { !$0.value.pushes.isEmpty }.mapValues { .array($0.pushes.map(JSONValue.double)) }),
        ])
    }

    @Test func aTargetsBackendIsItsNameUpToTheFirstSlash() {
        #expect(DeliveryState.backend(ofTarget: "family/notify.mobile_app_me") == "family")
        #expect(DeliveryState.backend(ofTarget: "aivi") == "aivi")
        #expect(DeliveryState.backend(ofTarget: "café/notify.x/y") == "café")
        #expect(DeliveryState.backend(ofTarget: "/x") == "")
    }

    @Test func theFileIsWhatTheTreeWrites() throws {
        var random = SeededRandom(state: 51)
        let names = ["washer", "dryer", "a", "a-b", "ä", "wash\"er", "x\\y", "tab\there", "ev@charger", "日本", "", "A", "b"]
        let targets = ["aivi", "pulse", "family/notify.mobile_app_me", "pushward", ""]
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { Bool.random(using: &random) ? value() : nil }
        for _ in 0..<500 {
            var state = DeliveryState()
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let key = DeliveryState.key(activity: names.randomElement(using: &random)!, target: targets.randomElement(using: &random)!)
                let dismissal = maybe(DeliveryState.Dismissal(
                    target: targets.randomElement(using: &random)!, body: ["message": "clear_notification", "n": .double(Double.random(in: -1...1e6, using: &random))],
                    at: Double(Int.random(in: 0...2_000_000_000, using: &random)) + [0, 0.5, 0.125].randomElement(using: &random)!,
                    kind: [.homeassistant, .pushward].randomElement(using: &random)!, method: ["call_service", "PATCH"].randomElement(using: &random)!))
                state.entries[key] = DeliveryState.Entry(
                    running: Bool.random(using: &random), digest: maybe(DeliveryState.digest([UInt8.random(in: 0...255, using: &random)])),
                    dismissal: dismissal, started: maybe(Double(Int.random(in: 0...2_000_000_000, using: &random))),
                    dismissed: Bool.random(using: &random))
            }
            if Bool.random(using: &random) {
                state.relays["notify.mobile_app_me"] = RelayBudget(pushes: Bool.random(using: &random) ? [] : [1_700_000_000, 1_700_000_001.5])
            }
            let (direct, tree) = (state.fileBytes, Self.tree(state).jsonBytes)
            let same = direct == tree  // bytes, not text: the file is written as these
            #expect(same, "\(String(decoding: direct, as: UTF8.self))\n  vs the tree's\n\(String(decoding: tree, as: UTF8.self))")
        }
    }
}
