public import JSON
import Platform
import Templates
import LiveActivity

/// What Home Assistant must have for a `homeassistant` target to show a Live Activity, checked against its
/// `get_services` and device registry: the notify service exists, and the phone behind it is an Apple device (core
/// routes Live Activities only for a registration whose manufacturer is `Apple`; any other phone gets an ordinary
/// notification and the call still succeeds, so nothing else would tell). One warning per target that falls short,
/// naming it and what the user will get instead.
public enum LiveActivityPreconditions {
    public static func warnings(_ rules: RulesFile, services: JSONValue, devices: JSONValue) -> [String] {
        var seen: Set<String> = []
        var warnings: [String] = []
        for rule in rules.activities {
            for target in rule.targets where target.kind.definition.spendsRelay {
                guard let service = target.service, seen.insert(service).inserted else { continue }
                if let problem = problem(service, services: services, devices: devices) { warnings.append("\(service): \(problem)") }
            }
        }
        return warnings
    }

    static func problem(_ service: String, services: JSONValue, devices: JSONValue) -> String? {
        let parts = service.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2, services[parts[0]]?[parts[1]] != nil else {
            return "Home Assistant has no such service: nothing reaches a phone (is the companion app registered, the name right?)"
        }
        guard parts[0] == "notify", parts[1].hasPrefix("mobile_app_") else {
            return "not a companion app's notify service: only a notify group of companion apps' services passes Live Activities on; "
                + "anything else gets ordinary notifications (LiveBridge cannot tell which)"
        }
        let slug = String(parts[1].dropFirst("mobile_app_".count))
        // The service is named after the device: notify.mobile_app_<device name, slugified>.
        let device = devices.arrayValue?.first { entry in
            let name = entry["name_by_user"]?.stringValue ?? entry["name"]?.stringValue ?? ""
            let fromApp = entry["identifiers"]?.arrayValue?.contains { $0.arrayValue?.first?.stringValue == "mobile_app" } ?? true
            return fromApp && (try? Slug.make(.string(name), separator: "_")) == slug
                || (try? Slug.make(.string(entry["name"]?.stringValue ?? ""), separator: "_")) == slug
        }
        guard let device else { return "no phone in the device registry answers to it; it may not be an iPhone" }
        let manufacturer = device["manufacturer"]?.stringValue
        guard manufacturer == "Apple" else {
            return "its phone is made by \(manufacturer.map { OutsideText.quoted($0) } ?? "an unknown maker"), not Apple: Home Assistant sends it ordinary notifications, no Live Activity"
        }
        return nil
    }
}
