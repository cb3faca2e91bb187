import Dispatcher
import Foundation
import JSON
import LiveActivity
import Platform
import Testing
import HTTPClient

/// `state.json` is a file anyone with the data directory can write: every entry is checked on load, a bad one
/// dropped with a warning naming it, and nothing in it can trap a start or send a request its backend never makes.
@Suite(.timeLimit(.minutes(1)))
struct SavedStateTests {
    let now = Date().timeIntervalSince1970

    func stateFile(_ activities: String, relays: String = "{}") throws -> DeliveryStateFile {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-saved-\(UUID().uuidString)").path
        let file = try DeliveryStateFile(directory: directory)
        try #"{"version":1,"activities":\#(activities),"relays":\#(relays)}"#.write(toFile: file.path, atomically: false, encoding: .utf8)
        return file
    }

    func clear(target: String = "notify.mobile_app_phone", kind: String = "homeassistant", method: String = "call_service", at: String? = nil) -> String {
        let body = #"{"message":"clear_notification","data":{"tag":"washer"}}"#
        return #"{"target":\#(JSONValue.string(target).jsonText),"body":\#(body),"at":\#(at ?? "\(now + 60)"),"kind":"\#(kind)","method":\#(JSONValue.string(method).jsonText)}"#
    }

    @Test(arguments: [
        // A time that traps a conversion to Int, at every start after it was written.
        (#"{"running":true,"started":1e300}"#, "started is not a time within a week of now"),
        (#"{"running":true,"started":-1e300}"#, "started is not a time within a week of now"),
        (#"{"running":false,"dismiss":CLEAR_AT_HUGE}"#, "dismiss.at is not a time within a week of now"),
        // The backend's token to another host: base URL + "@other-host/steal".
        (#"{"running":false,"dismiss":CLEAR_STEAL}"#, #"dismiss.target: "@other-host/steal" is not a pushward request path (/activities/<id>)"#),
        (#"{"running":false,"dismiss":CLEAR_PARENT}"#, #"dismiss.target: "/activities/../admin" is not a pushward request path (/activities/<id>)"#),
        // A second request smuggled in the method.
        (#"{"running":false,"dismiss":CLEAR_SMUGGLE}"#, #"dismiss.method "PATCH\u000d\u000aX-Evil: 1" is not one of pushward's: PATCH"#),
        (#"{"running":false,"dismiss":CLEAR_KIND}"#, "dismiss.kind is not a backend kind"),
        (#"{"running":"yes"}"#, "running is not true or false"),
        (#"{"running":true,"digest":"<script>"}"#, "digest is not 16 hex digits"),
    ])
    func aBadEntryIsDroppedWithAWarningNamingItAndTheRestLoads(entry: String, problem: String) throws {
        let entry = entry.replacingOccurrences(of: "CLEAR_AT_HUGE", with: clear(at: "1e300"))
            .replacingOccurrences(of: "CLEAR_STEAL", with: clear(target: "@other-host/steal", kind: "pushward", method: "PATCH"))
            .replacingOccurrences(of: "CLEAR_PARENT", with: clear(target: "/activities/../admin", kind: "pushward", method: "PATCH"))
            .replacingOccurrences(of: "CLEAR_SMUGGLE", with: clear(target: "/activities/washer", kind: "pushward", method: "PATCH\r\nX-Evil: 1"))
            .replacingOccurrences(of: "CLEAR_KIND", with: clear(kind: "gopher"))
        let file = try stateFile(#"{"bad@phone":\#(entry),"washer@phone":{"running":true,"digest":"af63dc4c8601ec8c"}}"#)
        var warnings: [String] = []
        let state = file.load(now: now) { warnings.append($0) }
        #expect(warnings == [#"state.json: entry "bad@phone" dropped: "# + problem])
        #expect(state.entries == ["washer@phone": .init(running: true, digest: "af63dc4c8601ec8c")])
    }

    @Test func aKeyOrRelayOutsideTheGrammarIsDropped() throws {
        let file = try stateFile(#"{"wash\u0000er@phone":{"running":true},"washer@phone/notify.x y":{"running":true},"nokey":{"running":true}}"#,
                                 relays: #"{"notify.mobile_app_phone":[\#(now - 10), 1e300, -5],"../etc":[\#(now)]}"#)
        var warnings: [String] = []
        let state = file.load(now: now) { warnings.append($0) }
        #expect(state.entries.isEmpty)
        #expect(state.relays == ["notify.mobile_app_phone": RelayBudget(pushes: [now - 10])])
        #expect(Set(warnings) == [
            #"state.json: entry "wash\u0000er@phone" dropped: the activity is not 1 to 256 characters without control characters"#,
            #"state.json: entry "washer@phone/notify.x y" dropped: the target's service: "notify.x y" is not a notify service; write notify.mobile_app_<device>"#,
            #"state.json: entry "nokey" dropped: the key is not activity@target"#,
            "state.json: relay \"notify.mobile_app_phone\": 2 times out of range dropped",
            "state.json: relay \"../etc\" dropped: not a notify service with a list of times",
        ])
    }

    /// What the dispatcher writes loads back whole: the checks refuse nothing LiveBridge makes.
    @Test func everyClearLiveBridgeMakesPassesTheChecks() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-saved-\(UUID().uuidString)").path
        let file = try DeliveryStateFile(directory: directory)
        let pushWard = BackendRequest.pushWard(backend: "pw", slug: "washer", kind: .end, content: ["progress": 1], priority: nil, sound: nil,
                                               creation: [:], dismissAfter: .seconds(60)).dismissalRequest!
        // Home Assistant's end is one push now; a clear saved by an earlier version still loads and is sent.
        let phone = BackendRequest(backend: "phone", kind: .homeassistant, method: "call_service", target: "notify.mobile_app_phone",
                                   body: ["message": "clear_notification", "data": ["tag": "washer"]])
        var state = DeliveryState()
        for (key, request) in [("washer@pw", pushWard), ("washer@phone/notify.mobile_app_phone", phone)] {
            state.entries[key] = .init(running: false, digest: nil, dismissal: .init(target: request.target, body: request.body, at: (now + 60).rounded(),
                                                                                     kind: request.kind, method: request.method))
        }
        state.entries["dryer@aivi"] = .init(running: true, digest: DeliveryState.digest([1]), started: now.rounded())
        try file.save(state)
        var warnings: [String] = []
        #expect(file.load(now: now) { warnings.append($0) } == state)
        #expect(warnings.isEmpty)
    }

    /// A huge `started` trapped every start of the daemon; now the entry is dropped and the dispatcher starts.
    @Test func aDispatcherStartsOverAHostileStateFile() async throws {
        let file = try stateFile(#"{"washer@aivi":{"running":true,"started":1e300},"dryer@aivi":{"running":false,"dismiss":\#(clear(at: "1e300"))}}"#)
        let warnings = Locked<[String]>([])
        let dispatcher = Dispatcher(backends: [], stateFile: file, log: { line in warnings.withLock { $0.append(line) } })
        let dispatcherRun = Task { await dispatcher.run() }
        defer { dispatcherRun.cancel() }
        await dispatcher.resume()
        #expect(await dispatcher.runningActivities.isEmpty)
        #expect(warnings.withLock { $0.count } == 2)
    }

    @Test func aFIFOInPlaceOfTheStateFileIsRefusedWithoutBlocking() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-saved-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(mkfifo(directory + "/state.json", 0o600) == 0)
        #expect(throws: DeliveryStateFile.FileError.self) { try DeliveryStateFile(directory: directory) }
        do { _ = try DeliveryStateFile(directory: directory) } catch {
            #expect("\(error)" == "the state file \(directory)/state.json is a FIFO, not a regular file: remove it (LiveBridge writes its own)")
        }
    }

    /// One put in its place after the start: the load does not block on it either.
    @Test func aFIFOAppearingLaterIsAWarningNotAHang() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livebridge-saved-\(UUID().uuidString)").path
        let file = try DeliveryStateFile(directory: directory)
        #expect(mkfifo(file.path, 0o600) == 0)
        var warnings: [String] = []
        #expect(file.load { warnings.append($0) } == DeliveryState())
        #expect(warnings.count == 1 && warnings[0].contains(file.path))
    }

    /// Whatever a target came from, an HTTP backend sends only to a path under its base URL.
    @Test(arguments: ["@other-host/steal", "/activity/../admin", "/activity/a#b", "/activity/a\r\nX: y", "/activity/a?x=1", "//other-host/x"])
    func anHTTPBackendNeverSendsOutsideItsPaths(target: String) async {
        let backend = HTTPPushBackend(name: "aivi", service: AiviSchema.definition, baseURL: "http://127.0.0.1:9", token: "t", client: .init())
        let request = BackendRequest(backend: "aivi", kind: .aivi, method: "PATCH", target: target, body: [:])
        #expect(await backend.deliver(request, kind: .update).outcome == .rejected(.invalidTarget))
    }
}
