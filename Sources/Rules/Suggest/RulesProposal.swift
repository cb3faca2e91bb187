import JSON

/// A commented rules file for the appliances `ApplianceRecognizer` found: one Aivi activity each, naming the entities
/// it reads, that `check` accepts as written (its secrets in secrets.yaml beside it). Pure: equal input, equal text.
public struct RulesProposal: Sendable {
    /// How the proposal reaches Home Assistant.
    public enum Connection: Sendable {
        /// A url with `token: !secret ha_token`.
        case url(String)
        /// Inside the add-on: no `homeassistant:` at all (the Supervisor's token is used).
        case supervisor
    }

    public var connection: Connection
    public var appliances: [Appliance]
    /// Where the states came from, for the header.
    public var source: String

    /// How many recognised appliances were left out because something Home Assistant gave for them could not be
    /// written safely (an entity id outside its grammar, no running state that is plain text).
    public let leftOut: Int

    /// Everything from Home Assistant is made safe here, once: the appliances kept are `ProposalText.safe`.
    public init(connection: Connection, appliances: [Appliance], source: String) {
        var kept: [Appliance] = []
        var keys: Set<String> = []
        for appliance in appliances {
            guard var safe = ProposalText.safe(appliance) else { continue }
            var key = safe.id
            var n = 2
            while !keys.insert(key).inserted { key = "\(safe.id)_\(n)"; n += 1 }
            safe.id = key
            kept.append(safe)
        }
        (self.connection, self.appliances, self.source) = (connection, kept, ProposalText.plain(source, limit: 200))
        leftOut = appliances.count - kept.count
    }

    /// The secrets the text asks for, each with a placeholder or what the caller knows.
    public var secretNames: [String] {
        if case .url = connection { return ["ha_token", "aivi_token"] }
        return ["aivi_token"]
    }

    public var text: String {
        var out = """
            # LiveBridge rules proposed by `livebridge suggest` from \(source).
            # One activity per appliance recognised, each naming the entities it reads: keep what you want, adjust the
            # running states and texts, then `livebridge check` this file, `livebridge render` it against the live
            # states, and `livebridge run` it.

            """
        switch connection {
        case .url(let url):
            out += "\nhomeassistant:\n  url: \(Self.quoted(url))\n  token: !secret ha_token              # a long-lived access token (secrets.yaml)\n\n"
        case .supervisor:
            out += "# Home Assistant: reached through the Supervisor with the add-on's token: no url or token to give.\n\n"
        }
        out += """
            backends:
              aivi:
                type: aivi
                token: !secret aivi_token            # the Aivi app's API token (secrets.yaml)

            defaults:
              backend: aivi
              debounce: 2s          # wait for 2 s of quiet before an update…
              max_wait: 15s         # …but never longer than 15 s after the first unsent change
              min_interval: 5s      # at most one update every 5 s per activity

            """
        out += "\n"
        if leftOut > 0 {
            out += "# \(leftOut) appliance(s) recognised but left out: an entity id or state Home Assistant gave could not be written safely.\n"
        }
        if appliances.isEmpty {
            out += "# No washer, dryer, dishwasher, 3D printer, EV charger, timer, vacuum or media player was recognised.\n"
            out += "# Write an activity by hand: see the README's configuration reference.\nactivities: {}\n"
            return out
        }
        out += "activities:\n"
        for appliance in appliances {
            out += "  # \(appliance.kind.title.prefix(1).uppercased() + appliance.kind.title.dropFirst()) \(Self.quoted(appliance.name))"
            out += (appliance.area.map { " in \($0)" } ?? "") + ": "
            out += appliance.entities.joined(separator: ", ") + "\n"
            out += "  \(appliance.id):\n"
            out += "    active_when: \(Self.quoted(Self.activeWhen(appliance.running)))\n"
            for line in Self.fields(appliance) { out += "    \(line)\n" }
            out += "\n"
        }
        return out
    }

    static func activeWhen(_ running: Appliance.Running) -> String {
        switch running {
        case .states(let id, let states) where states.count == 1: return "{{ is_state('\(id)', \(literal(states[0]))) }}"
        case .states(let id, let states): return "{{ states('\(id)') in [\(states.map(literal).joined(separator: ", "))] }}"
        case .notStates(let id, let states): return "{{ states('\(id)') | lower not in [\(states.map(literal).joined(separator: ", "))] }}"
        case .power(let id, let watts): return "{{ states('\(id)') | float(0) > \(watts) }}"
        case .progressBetween(let id): return "{{ 0 < states('\(id)') | float(0) < 100 }}"
        }
    }

    /// The fields after active_when, one YAML line each.
    static func fields(_ a: Appliance) -> [String] {
        let name = quoted(a.name)
        switch a.kind {
        case .timer:
            let id = a.entity!
            // The elapsed share of the duration, 0…1; 1 once finishes_at is gone (the timer has ended).
            let elapsed = "{% set end = state_attr('\(id)', 'finishes_at') %}{{ 1 if end is none else [0, [1, 1 - ((end | as_datetime) - now()).total_seconds() "
                + "/ ((state_attr('\(id)', 'duration') | as_timedelta).total_seconds() or 1)] | min] | max }}"
            return ["template: progress", "icon: auto", "entity: \(id)", "header_left: \(name)",
                    "progress: { style: simple, value: \(quoted(elapsed)), color: teal }",
                    "header_right: { value: \"{{ state_attr('\(id)', 'finishes_at') }}\", formatter: time_until }",
                    "compact_value: { value: \"{{ state_attr('\(id)', 'finishes_at') }}\", formatter: time_until }",
                    // finishes_at is gone once the timer ends: the end says so in its place.
                    "on_end: { header_left: Done, header_right: Finished, compact_value: Done }"]
        case .vacuum:
            let id = a.entity!
            return monitor(id, left: "{ header: \(name), value: \"{{ states('\(id)') }}\" }",
                           right: "{ header: Battery, value: \"{{ state_attr('\(id)', 'battery_level') | int(0) }}%\" }")
        case .mediaPlayer:
            let id = a.entity!
            return monitor(id, left: "{ header: \(name), value: \"{{ state_attr('\(id)', 'media_title') | default('Playing', true) }}\" }",
                           right: "{ header: Artist, value: \"{{ state_attr('\(id)', 'media_artist') | default('—', true) }}\" }")
        case .evCharging:
            var lines = ["template: progress", "icon: bolt.car", "header_left: \(name)"]
            if let battery = a.battery {
                lines += ["progress: { style: simple, value: \"{{ states('\(battery)') | float(0) / 100 }}\", color: green }",
                          "footer_left: Battery", "footer_right: \"{{ states('\(battery)') | int(0) }}%\"",
                          "compact_value: \"{{ states('\(battery)') | int(0) }}%\""]
            }
            lines += remaining(a.remaining)
            return lines + ["on_end: { header_left: Charged }"]
        case .washer, .dryer, .dishwasher, .printer:
            let icon = ["washer": "washer", "dryer": "dryer", "dishwasher": "dishwasher", "printer": "printer"][a.kind.rawValue]!
            guard a.progress != nil else {
                // No progress to draw: two columns, what it is doing and what it draws (or the time left).
                var right = "right_column: { header: Since, value: { value: \"{{ now().isoformat() }}\", formatter: time_since } }"
                if case .power(let id, _) = a.running { right = "right_column: { header: Power, value: \"{{ states('\(id)') | int(0) }} W\" }" }
                if case .finishesAt(let id)? = a.remaining { right = "right_column: { header: Ends, value: { value: \"{{ states('\(id)') }}\", formatter: time_until } }" }
                if case .amount(let id, let unit)? = a.remaining { right = "right_column: { header: Left, value: \"{{ states('\(id)') | int(0) }} \(unit.replacing("\"", with: ""))\" }" }
                var status = "Running"
                if case .states(let id, _) = a.running, !id.hasPrefix("binary_sensor.") { status = "{{ states('\(id)') }}" }
                if case .notStates(let id, _) = a.running { status = "{{ states('\(id)') }}" }
                return ["template: monitor", "icon: \(icon)", "left_column: { header: \(name), value: \(quoted(status)) }", right, "primary_column: left"]
            }
            var lines = ["template: progress", "icon: \(icon)", "header_left: \(name)"]
            if let progress = a.progress {
                lines += ["progress: { style: simple, value: \"{{ states('\(progress)') | float(0) / 100 }}\" }",
                          "footer_right: \"{{ states('\(progress)') | int(0) }}%\"",
                          "compact_value: \"{{ states('\(progress)') | int(0) }}%\""]
            }
            if case .states(let id, _) = a.running, !id.hasPrefix("binary_sensor.") { lines.append("footer_left: \"{{ states('\(id)') }}\"") }
            if case .notStates(let id, _) = a.running { lines.append("footer_left: \"{{ states('\(id)') }}\"") }
            lines += remaining(a.remaining)
            return lines + ["on_end: { header_left: Done }"]
        }
    }

    /// An entity's two columns, the left one primary; the icon from the entity's domain.
    static func monitor(_ id: String, left: String, right: String) -> [String] {
        ["template: monitor", "icon: auto", "entity: \(id)", "left_column: \(left)", "right_column: \(right)", "primary_column: left"]
    }

    static func remaining(_ remaining: Appliance.Remaining?) -> [String] {
        switch remaining {
        case .finishesAt(let id)?: return ["header_right: { value: \"{{ states('\(id)') }}\", formatter: time_until }"]
        case .attribute(let id, let name)?: return ["header_right: { value: \"{{ state_attr('\(id)', '\(name)') }}\", formatter: time_until }"]
        case .amount(let id, let unit)?: return ["header_right: \"{{ states('\(id)') | int(0) }} \(unit.replacing("\"", with: "")) left\""]
        case nil: return []
        }
    }

    /// A Jinja string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    /// A YAML double-quoted scalar (JSON's escapes are YAML's; `\u2028` and `\u2029` escaped too, which YAML
    /// would read as line breaks).
    public static func quoted(_ text: String) -> String {
        JSONValue.string(text).jsonText.replacing("\u{2028}", with: "\\u2028").replacing("\u{2029}", with: "\\u2029")
    }
}
