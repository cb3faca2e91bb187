import Foundation
import Rules
import Testing

/// The configuration reference (docs/configuration.md) names every key the loader accepts.
struct ConfigReferenceTests {
    static let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")

    func referenceSection() throws -> String {
        let text = try String(contentsOf: Self.reference, encoding: .utf8)
        guard let start = text.range(of: "# Configuration reference") else { return "" }
        return String(text[start.upperBound...])
    }

    @Test func everyConfigKeyIsDocumented() throws {
        let section = try referenceSection()
        #expect(!section.isEmpty, "docs/configuration.md has no '# Configuration reference'")
        let missing = ConfigReference.allKeys.filter { !section.contains("`\($0)`") }.sorted()
        #expect(missing.isEmpty, "undocumented keys: \(missing)")
    }

    @Test func theReferenceNamesNoKeyTheCodeDoesNotKnow() throws {
        let section = try referenceSection()
        // First cells name the places; backticked words in the key column must all be known keys or values.
        let values: Set<String> = ["aivi", "islandpulse", "homeassistant", "free", "pro", "notify.mobile_app_…", "HOST:PORT", "!secret",
                                   "generic", "monitor", "progress", "live_update", "default", "score", "sports", "{{ … }}",
                                   "!secret NAME", "!env_var NAME [default]", "!include FILE", "homeassistant:", "backends: NAME:",
                                   "defaults:", "status:", "events:", "livebridge_activity", "activities: ID:", "style", "value", "header", "footer", "color", "segments",
                                   "display", "text_color", "formatter", "icon: auto", "subscribe_entities", "state_changed", "30s", "10s",
                                   "unlimited", "never", "0.05", "3m", "{progress: 0.05, eta: 3m}",
                                   "pushward", "ended", "mdi:", "foreground", "countdown", "steps", "alert", "gauge",
                                   "activitysmith", "segmented_progress", "stats", "label", "unit", "timeline", "board", "log", "media", "timer"]
        var unknown: [String] = []
        var rest = Substring(section)
        while let open = rest.firstIndex(of: "`") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "`") else { break }
            let word = String(after[..<close])
            if !ConfigReference.allKeys.contains(word) && !values.contains(word) { unknown.append(word) }
            rest = after[after.index(after: close)...]
        }
        #expect(unknown.isEmpty, "documented but unknown to the code: \(unknown)")
    }
}
