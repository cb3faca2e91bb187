import HomeAssistant
import LiveActivity
import Rules
import Testing
import Templates
import JSON

struct IconCatalogTests {
    func symbol(_ id: String, _ attributes: [String: String] = [:]) -> String? {
        IconCatalog.symbol(for: EntityState(entityID: id, state: "on", attributes: EntityAttributes(attributes.mapValues { .string($0) }), lastChanged: 0))
    }

    @Test(arguments: [
        ("mdi:washing-machine", "washer"), ("mdi:tumble-dryer", "dryer"), ("mdi:dishwasher", "dishwasher"),
        ("mdi:car-electric", "bolt.car"), ("mdi:battery-charging-80", "battery.100.bolt"), ("mdi:timer-outline", "timer"),
        ("mdi:robot-vacuum", "robotic.vacuum"), ("mdi:thermometer", "thermometer.medium"), ("mdi:door-open", "door.left.hand.closed"),
        ("mdi:lock", "lock"), ("mdi:lightbulb-on", "lightbulb"), ("mdi:printer-3d-nozzle", "printer.filled.and.paper"),
        ("mdi:stove", "stove"), ("mdi:coffee-maker", "cup.and.saucer"),
    ])
    func fromTheMdiIcon(icon: String, expected: String) {
        #expect(symbol("sensor.x", ["icon": icon]) == expected)
    }

    @Test func fromDeviceClassThenDomain() {
        #expect(symbol("sensor.x", ["device_class": "battery"]) == "battery.75")
        #expect(symbol("sensor.x", ["icon": "mdi:unknown-thing", "device_class": "temperature"]) == "thermometer.medium")
        #expect(symbol("timer.laundry") == "timer")
        #expect(symbol("vacuum.robo") == "robotic.vacuum")
        #expect(symbol("sensor.nothing") == nil)
    }
}

/// An `icon: mdi:…` written in a rule is drawn as its SF Symbol (the phone draws nothing else); one with no symbol is
/// left out, and `check` warns about it; `check --verbose` lists each coercion.
struct MDIIconTests {
    @Test(arguments: [("mdi:timer-outline", "timer"), ("mdi:check-circle-outline", "checkmark.circle"), ("mdi:pause", "pause"),
                      ("mdi:alert", "exclamationmark.triangle"), ("mdi:washing-machine-alert", "washer"), ("mdi:fridge-outline", "refrigerator")])
    func knownIconsAreDrawnAsTheirSymbol(icon: String, symbol: String) {
        #expect(IconCatalog.symbol(forMDI: icon) == symbol)
    }

    static let rules = """
        homeassistant: { url: "ws://127.0.0.1:9", token: t }
        backends:
          aivi: { type: aivi, token: t }
          free: { type: islandpulse, token: p, tier: free }
        activities:
          washer:
            backend: [aivi, free]
            active_when: "{{ true }}"
            template: progress
            icon: mdi:timer-outline
            progress: { style: simple, value: 0.5 }
          unicorn:
            active_when: "{{ true }}"
            backend: aivi
            template: generic
            icon: { name: mdi:unicorn-variant, primary_color: pink }
            progress: 0.5

        """

    @Test func theRendererDrawsTheSymbolOrLeavesTheIconOut() throws {
        let rules = try RulesLoader.load(text: Self.rules, file: "rules.yaml").get()
        let context = EvaluationContext(states: [:], now: 0)
        var notes: [PayloadIssue] = []
        let washer = try ActivityRenderer.render(rules.activities[0], for: rules.activities[0].targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(washer.body["content"]?["icon"] == "timer" && notes.isEmpty)
        let unicorn = try ActivityRenderer.render(rules.activities[1], for: rules.activities[1].targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(unicorn.body["content"]?["icon"] == nil)
        #expect(notes.map(\.description) == ["icon: mdi:unicorn-variant has no SF Symbol LiveBridge knows (the phone draws SF Symbols); the icon is left out"])
    }

    @Test func checkWarnsAndListsTheCoercions() throws {
        let notes = try RulesLoader.load(text: Self.rules, file: "rules.yaml").get().notes
        #expect(notes.warnings.map { "\($0.location.line):\($0.location.column) \($0.path)" } == ["9:15 activities.washer.template", "16:19 activities.unicorn.icon"])
        #expect(notes.warnings[0].message.hasPrefix("free is on Island Pulse's free tier, which shows the default layout only: the progress layout's bar will not show"))
        #expect(notes.coercions.map(\.message).contains("mdi:timer-outline is drawn as the SF Symbol \"timer\" (the phone draws SF Symbols)"))
        #expect(notes.coercions.map(\.message).contains { $0.hasPrefix("on free (Island Pulse) the Aivi progress template is shown as the progress") })
    }
}
