import JSON
@testable import Rules
import Testing

/// What Home Assistant must have for a homeassistant target, and the relay quota other notifications spend.
struct LiveActivityPreconditionsTests {
    static let rules = try! RulesLoader.load(text: """
        backends:
          phones: { type: homeassistant, service: [notify.mobile_app_iphone, notify.mobile_app_pixel, notify.mobile_app_gone, notify.persistent] }
        activities:
          washer: { backend: phones, active_when: "{{ true }}", template: generic, state: Washing, progress: 0.5 }
        """, file: "r.yaml").get()

    static let services: JSONValue = ["notify": ["mobile_app_iphone": [:], "mobile_app_pixel": [:], "persistent": [:]]]
    static let devices: JSONValue = [
        ["name": "iPhone", "manufacturer": "Apple", "identifiers": [["mobile_app", "abc"]]],
        ["name": "Pixel", "manufacturer": "Google", "identifiers": [["mobile_app", "def"]]],
    ]

    @Test func eachTargetThatFallsShortIsNamedWithWhatTheUserGetsInstead() {
        #expect(LiveActivityPreconditions.warnings(Self.rules, services: Self.services, devices: Self.devices) == [
            "notify.mobile_app_pixel: its phone is made by \"Google\", not Apple: Home Assistant sends it ordinary notifications, no Live Activity",
            "notify.mobile_app_gone: Home Assistant has no such service: nothing reaches a phone (is the companion app registered, the name right?)",
            "notify.persistent: not a companion app's notify service: only a notify group of companion apps' services passes Live Activities on; anything else gets ordinary notifications (LiveBridge cannot tell which)",
        ])
    }

    @Test func otherNotificationsToThePhoneAreCountedOursAndCommandsAreNot() {
        let tags = RelayedNotification.ownTags(in: Self.rules)
        func event(_ service: String, _ data: JSONValue) -> JSONValue { ["data": ["domain": "notify", "service": .string(service), "service_data": data]] }
        #expect(RelayedNotification.countedDevice(event("mobile_app_iphone", ["message": "Door open"]), ownTags: tags) == "notify.mobile_app_iphone")
        #expect(RelayedNotification.countedDevice(event("mobile_app_iphone", ["message": "Washing", "data": ["tag": "washer", "live_update": true]]),
                                                  ownTags: tags) == nil, "LiveBridge's own push is counted where it is sent")
        #expect(RelayedNotification.countedDevice(event("mobile_app_iphone", ["message": "request_location_update"]), ownTags: tags) == nil)
        #expect(RelayedNotification.countedDevice(event("mobile_app_someone_else", ["message": "Hi"]), ownTags: tags) == nil)
        #expect(RelayedNotification.countedDevice(["data": ["domain": "light", "service": "turn_on"]], ownTags: tags) == nil)
    }

    /// Core's development branch names the phone by its device id (and name): the id is matched through the device
    /// registry, the name when the id is not known.
    @Test func aSwipeIsMatchedByTheDeviceIDThroughTheRegistry() {
        let services = LiveActivityDismissal.services(devices: [
            ["id": "d-iphone", "name": "iPhone", "manufacturer": "Apple", "identifiers": [["mobile_app", "abc"]]],
            ["id": "d-light", "name": "iPhone", "identifiers": [["hue", "x"]]],
        ])
        #expect(services == ["d-iphone": "notify.mobile_app_iphone"])
        #expect(LiveActivityDismissal.targets(in: Self.rules, event: ["tag": "washer", "device_id": "d-iphone"], services: services).map(\.target)
                == ["phones/notify.mobile_app_iphone"])
        #expect(LiveActivityDismissal.targets(in: Self.rules, event: ["tag": "washer", "device_id": "unknown", "device_name": "Pixel"], services: services)
                .map(\.target) == ["phones/notify.mobile_app_pixel"])
    }
}
