import Foundation
import HomeAssistant
import Rules
import Testing
import LiveActivity

/// Each kind of bad rules file gets an error naming the file, line, column and path; all errors come at once.
struct RulesLoaderTests {
    static let header = """
        homeassistant:
          url: http://ha.local:8123
          token: !secret ha_token
        backends:
          aivi: { type: aivi, token: t-aivi }
          pulse: { type: islandpulse, token: t-pulse }
          phone: { type: homeassistant, service: notify.mobile_app_phone }
        defaults: { backend: aivi }
        activities:

        """

    /// Loads `activities` (indented by the caller) after a fixed 9-line header; line numbers in expectations count from 1 of the whole file.
    func errors(_ activities: String) throws -> [String] {
        let folder = try ConfigFolder(["livebridge.yaml": Self.header + activities, "secrets.yaml": "ha_token: llat-secret-xyz\n"])
        switch RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) {
        case .success: return []
        case .failure(let failure):
            return failure.positioned
        }
    }

    static let washer = """
          washer:
            active_when: "{{ is_state('sensor.washer', 'running') }}"
            template: progress
            progress: { style: simple, value: 0.5, color: blue }

        """

    @Test func theHeartbeatIsConfigurableAndMustBePositive() throws {
        let good = try ConfigFolder(["livebridge.yaml": "homeassistant: { url: ws://h:8123, token: t, ping_interval: 5s, pong_timeout: 2s }\n"])
        let settings = try #require(try RulesLoader.load(file: good.file("livebridge.yaml"), environment: [:]).get().homeAssistant)
        #expect(settings.pingInterval == .seconds(5))
        #expect(settings.pongTimeout == .seconds(2))
        let bad = try ConfigFolder(["livebridge.yaml": "homeassistant: { url: ws://h:8123, token: t, ping_interval: 0s, pong_timeout: soon }\n"])
        guard case .failure(let failure) = RulesLoader.load(file: bad.file("livebridge.yaml"), environment: [:]) else {
            Issue.record("a zero ping interval loaded")
            return
        }
        #expect(failure.positioned == [
            "1:61 homeassistant.ping_interval: must be longer than 0s",
            "1:79 homeassistant.pong_timeout: \"soon\" is not a duration; write 5s, 2m, 1h30m, 00:05:00 or {minutes: 5}",
        ])
    }

    /// As an add-on, `$SUPERVISOR_TOKEN` stands for url and token: a file that names no Home Assistant (or only its other
    /// settings) reaches it through the Supervisor. A file that names it is taken as written; half of it is an error.
    @Test func asAnAddOnTheSupervisorsTokenStandsForURLAndToken() throws {
        let backends = "backends: { aivi: { type: aivi, token: t } }\n"
        let supervisor = ["SUPERVISOR_TOKEN": "sv-token-123"]
        let folder = try ConfigFolder([
            "bare.yaml": backends, "tuned.yaml": "homeassistant: { entity_source: state_changed }\n" + backends,
            "named.yaml": "homeassistant: { url: ws://ha.local:8123, token: own }\n" + backends,
            "half.yaml": "homeassistant: { url: ws://ha.local:8123 }\n" + backends,
        ])
        let bare = try #require(try RulesLoader.load(file: folder.file("bare.yaml"), environment: supervisor).get().homeAssistant)
        #expect(bare.url == "ws://supervisor/core/websocket")
        #expect(bare.token == AccessToken("sv-token-123"))
        #expect(bare.throughSupervisor)
        let tuned = try #require(try RulesLoader.load(file: folder.file("tuned.yaml"), environment: supervisor).get().homeAssistant)
        #expect(tuned.throughSupervisor && tuned.entitySource == .stateChanged && tuned.url == "ws://supervisor/core/websocket")
        let named = try #require(try RulesLoader.load(file: folder.file("named.yaml"), environment: supervisor).get().homeAssistant)
        #expect(!named.throughSupervisor && named.url == "ws://ha.local:8123" && named.token == AccessToken("own"))
        guard case .failure(let half) = RulesLoader.load(file: folder.file("half.yaml"), environment: supervisor) else {
            Issue.record("a url without a token loaded")
            return
        }
        #expect(half.errors.map(\.path) == ["homeassistant.token"])
        // Without the Supervisor, nothing stands in: run needs the section.
        let outside = try RulesLoader.load(file: folder.file("bare.yaml"), environment: [:]).get()
        #expect(outside.homeAssistant == nil)
        #expect(outside.problemsForRun.map(\.path) == ["homeassistant"])
        #expect(try RulesLoader.load(file: folder.file("bare.yaml"), environment: ["SUPERVISOR_TOKEN": ""]).get().homeAssistant == nil)
    }

    @Test func aValidFileLoadsWithTheEntitiesItReads() throws {
        let folder = try ConfigFolder(["livebridge.yaml": Self.header + Self.washer, "secrets.yaml": "ha_token: llat-secret-xyz\n"])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        #expect(rules.activities.map(\.id) == ["washer"])
        #expect(rules.entityIDs == ["sensor.washer"])
        #expect(rules.activities[0].targets.map(\.name) == ["aivi"])
        #expect(rules.homeAssistant?.token.secret == "llat-secret-xyz")
        #expect(rules.budget == UpdateBudget.rulesDefault)
        #expect(rules.budget.maxPerHour == 15 && rules.budget.renewAfter == .seconds(28_200))
    }

    @Test func badYAML() throws {
        #expect(try errors("  washer: [unclosed\n") .first?.hasPrefix("11:1 : YAML syntax error") == true)
    }

    @Test func unknownKeyWithASuggestion() throws {
        #expect(try errors(Self.washer + "    icno: washer\n") == ["14:5 activities.washer.icno: unknown key \"icno\" (did you mean \"icon\"?)"])
    }

    @Test func badColour() throws {
        #expect(try errors(Self.washer.replacingOccurrences(of: "color: blue", with: "color: grey"))
                == ["13:51 activities.washer.progress.color: unknown colour \"grey\" (did you mean \"gray\"?)"])
    }

    @Test func segmentsThatDoNotSumToOne() throws {
        let rule = """
              ev:
                active_when: "{{ true }}"
                template: progress
                progress:
                  style: segmented
                  value: 0.5
                  segments:
                    - { value: 0.5, fill_color: green }
                    - { value: 0.4, fill_color: blue }

            """
        #expect(try errors(rule) == ["14:7 activities.ev.progress.segments: segment values sum to 0.9; they must sum to 1.0"])
    }

    @Test func fiveSegments() throws {
        let rule = """
              ev:
                active_when: "{{ true }}"
                template: progress
                progress:
                  style: segmented
                  value: 0.5
                  segments: [{value: 0.2, fill_color: green}, {value: 0.2, fill_color: green}, {value: 0.2, fill_color: green}, {value: 0.2, fill_color: green}, {value: 0.2, fill_color: green}]

            """
        #expect(try errors(rule) == ["16:17 activities.ev.progress.segments: has 5 items; 1–4 allowed"])
    }

    @Test func progressOutOfRange() throws {
        #expect(try errors(Self.washer.replacingOccurrences(of: "value: 0.5", with: "value: 1.5"))
                == ["13:39 activities.washer.progress.value: 1.5 is out of range 0–1"])
    }

    @Test func badJobID() throws {
        let rule = """
              backup:
                backend: pulse
                job_id: "nightly backup!"
                active_when: "{{ true }}"
                template: default
                message: Backing up

            """
        #expect(try errors(rule) == ["12:13 activities.backup.job_id: job_id \"nightly backup!\" may hold only letters, digits, _ and -"])
    }

    @Test func overLongIslandPulseField() throws {
        let rule = """
              match:
                backend: pulse
                active_when: "{{ true }}"
                template: sports
                metricA: "1234567"

            """
        #expect(try errors(rule) == ["14:14 activities.match.metricA: \"1234567\" is 7 characters; the sports layout shows at most 6"])
    }

    @Test func expressionSyntaxErrorPointsIntoTheTemplate() throws {
        let rule = """
              washer:
                active_when: "{{ is_state('sensor.washer', 'running' }}"
                template: generic
                progress: 0.5

            """
        #expect(try errors(rule) == ["11:58 activities.washer.active_when: template error: expected \")\" but found end of expression"])
    }

    /// Inside a literal block the line and column of the mistake; a folded block joins its lines, so its start.
    @Test func aMistakeInsideABlockScalarPointsAtItsLine() throws {
        let literal = Self.washer + "    footer_right: |-\n      Washer\n        and {{ nosuch_fn(1) }}\n"
        #expect(try errors(literal).first?.hasPrefix("16:16 activities.washer.footer_right: template error: unknown function \"nosuch_fn\"") == true)
        let folded = Self.washer + "    footer_right: >-\n      A folded\n      line {{ nosuch2(2) }}\n"
        #expect(try errors(folded).first?.hasPrefix("14:19 activities.washer.footer_right: template error: unknown function \"nosuch2\"") == true)
    }

    @Test func unknownFilter() throws {
        let rule = Self.washer + "    footer_right: \"{{ states('sensor.washer') | percent }}\"\n"
        let found = try errors(rule)
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("14:49 activities.washer.footer_right: template error: unknown filter \"percent\"; supported: float") == true)
    }

    /// A misspelt `template:` is said at the misspelling with the fix, not as a missing template at the activity.
    @Test func aMisspeltTemplateKeyIsNamed() throws {
        let rule = Self.washer.replacingOccurrences(of: "template: progress", with: "templat: progress")
        #expect(try errors(rule).first == "12:5 activities.washer.templat: unknown key \"templat\" (did you mean \"template\"?)")
    }

    @Test func unknownTemplate() throws {
        let rule = Self.washer.replacingOccurrences(of: "template: progress", with: "template: progres")
        #expect(try errors(rule) == ["12:15 activities.washer.template: unknown template \"progres\" (did you mean \"progress\"?); it takes: generic, monitor, progress"])
    }

    @Test func aTemplateTheBackendCannotShowIsALoadError() throws {
        let rule = """
              vacuum:
                backend: phone
                active_when: "{{ true }}"
                template: monitor

            """
        #expect(try errors(rule) == ["13:15 activities.vacuum.template: template \"monitor\" cannot be sent to homeassistant backend \"phone\"; it takes: live_update, progress, generic"])
    }

    @Test func everyErrorIsReportedNotOnlyTheFirst() throws {
        let rule = Self.washer.replacingOccurrences(of: "color: blue", with: "color: grey") + "    icno: x\n  dryer:\n    template: generic\n"
        let found = try errors(rule)
        #expect(found.count == 4, "\(found)")
        #expect(found.contains { $0.hasPrefix("16:5 activities.dryer.active_when: is required") })
        #expect(found.contains { $0.hasPrefix("16:5 activities.dryer.progress: is required") })
    }

    @Test func secretsNeverAppearInErrors() throws {
        let folder = try ConfigFolder([
            "livebridge.yaml": "homeassistant:\n  url: !secret ha_token\n  token: !secret ha_token\nactivities: {}\n",
            "secrets.yaml": "ha_token: llat-secret-xyz\n",
        ])
        guard case .failure(let failure) = RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) else {
            Issue.record("a token as URL must fail"); return
        }
        #expect(!failure.description.contains("llat-secret-xyz"))
        #expect(failure.errors.first?.path == "homeassistant.url")
    }

    @Test func twoActivitiesOnOneJobIDAreAnError() throws {
        let rule = """
              first:
                backend: pulse
                job_id: backup
                active_when: "{{ true }}"
                template: default
                message: one
              second:
                backend: pulse
                job_id: backup
                active_when: "{{ true }}"
                template: default
                message: two

            """
        #expect(try errors(rule) == ["17:5 activities.second: job_id \"backup\" is already used by activity first on backend pulse; give one of them its own job_id"])
    }

    @Test func durationsInEveryForm() {
        #expect(ConfigDuration.parse("5s") == .seconds(5))
        #expect(ConfigDuration.parse("2m") == .seconds(120))
        #expect(ConfigDuration.parse("1h30m") == .seconds(5400))
        #expect(ConfigDuration.parse("250ms") == .milliseconds(250))
        #expect(ConfigDuration.parse("00:00:05") == .seconds(5))
        #expect(ConfigDuration.parse("1.5") == .milliseconds(1500))
        #expect(ConfigDuration.parse("soon") == nil)
        #expect(ConfigDuration.parse("5x") == nil)
        #expect(ConfigDuration.parse("0:05") == .seconds(300), "Home Assistant's H:MM")
        #expect(ConfigDuration.parse("1:90:00") == .seconds(9000), "Home Assistant does not bound minutes")
        #expect(ConfigDuration.parse("inf") == nil)
        #expect(ConfigDuration.parse("1e300") == nil)
        #expect(ConfigDuration.parse("nan") == nil)
    }

    /// The whole file's errors for `defaults:` written as given (line 4).
    func defaultsErrors(_ defaults: String, secrets: String = "ha_token: llat-secret-xyz\n") throws -> [String] {
        let text = "homeassistant: { url: http://ha.local:8123, token: !secret ha_token }\nbackends:\n  aivi: { type: aivi, token: t }\n"
            + "defaults:\n" + defaults + "activities:\n" + Self.washer
        let folder = try ConfigFolder(["livebridge.yaml": text, "secrets.yaml": secrets])
        switch RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) {
        case .success(let rules): return ["ok \(rules.budget.debounce) \(rules.budget.maxWait) \(rules.budget.minInterval)"]
        case .failure(let failure): return failure.positioned
        }
    }

    @Test func aDurationOfTheWrongTypeIsAnErrorAtItsPlace() throws {
        #expect(try defaultsErrors("  max_wait: [1, 2]\n") == ["5:13 defaults.max_wait: a list is not a duration; write 5s, 2m, 1h30m, 00:05:00 or {minutes: 5}"])
        #expect(try defaultsErrors("  debounce: -5s\n") == ["5:13 defaults.debounce: \"-5s\" is not a duration; write 5s, 2m, 1h30m, 00:05:00 or {minutes: 5}"])
        #expect(try defaultsErrors("  debounce: \"-0:05\"\n") == ["5:13 defaults.debounce: \"-0:05\" is negative; a duration is 0s or longer"])
        #expect(try defaultsErrors("  min_interval: 1e300\n") == ["5:17 defaults.min_interval: \"1e300\" is longer than 7 days"])
        let unknownKey = try defaultsErrors("  max_wait: {minutes: 5, second: 3}\n")
        #expect(unknownKey == ["5:26 defaults.max_wait.second: unknown key \"second\" in a duration (did you mean \"seconds\"?)"])
        #expect(try defaultsErrors("  max_wait: {minutes: [5]}\n") == ["5:23 defaults.max_wait.minutes: a list is not a number of minutes"])
    }

    @Test func durationsTakeHomeAssistantsForms() throws {
        #expect(try defaultsErrors("  debounce: {seconds: 2, milliseconds: 500}\n  max_wait: {hours: 1, minutes: 5}\n  min_interval: \"00:01\"\n")
                    == ["ok 2.5 seconds 3900.0 seconds 60.0 seconds"])
        #expect(try defaultsErrors("  debounce: 0.25\n  max_wait: \"0:00:30\"\n  min_interval: 1m\n")
                    == ["ok 0.25 seconds 30.0 seconds 60.0 seconds"])
    }

    @Test func aWrongValueFromASecretIsShownAsItsSecretName() throws {
        let text = "homeassistant: { url: http://ha.local:8123, token: t, entity_source: !secret src }\n"
            + "backends:\n  aivi: { type: !secret kind, token: t, tier: !secret tier, base_url: !secret url }\n"
            + "status: { listen: !secret listen }\nactivities:\n" + Self.washer
        let secrets = "src: hunter2-source\nkind: hunter2-kind\ntier: hunter2-tier\nurl: hunter2-url\nlisten: hunter2-listen\n"
        let folder = try ConfigFolder(["livebridge.yaml": text, "secrets.yaml": secrets])
        guard case .failure(let failure) = RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) else {
            Issue.record("loaded"); return
        }
        let all = failure.errors.map(\.message).joined(separator: "\n")
        #expect(!all.contains("hunter2"), "\(all)")
        #expect(all.contains("unknown entity source !secret src"))
        #expect(all.contains("unknown backend type !secret kind"))
        #expect(all.contains("!secret listen is not HOST:PORT"))
    }

    func fileErrors(_ text: String) throws -> [String] {
        let folder = try ConfigFolder(["livebridge.yaml": text])
        switch RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]) {
        case .success: return []
        case .failure(let failure): return failure.errors.map { "\($0.location.line):\($0.location.column) \($0.message)" }
        }
    }

    static let top = "homeassistant: { url: ws://h:8123, token: t }\nbackends: { aivi: { type: aivi, token: t } }\nactivities:\n  washer:\n"

    /// The mistakes of a file pasted from Home Assistant read like its configuration check, with the fix.
    @Test func anUnquotedTemplateSaysToQuoteIt() throws {
        #expect(try fileErrors(Self.top + "    active_when: {{ is_state('sensor.w', 'on') }}\n    template: generic\n")
                    == ["5:46 a template must be quoted: write \"{{ is_state('sensor.w', 'on') }}\" (unquoted, YAML reads { as the start of a mapping)"])
    }

    @Test func aTabSaysTabsAreNotAllowed() throws {
        #expect(try fileErrors(Self.top + "\tactive_when: \"{{ true }}\"\n") == ["5:1 tabs are not allowed in YAML; indent with spaces"])
    }

    @Test func aDedentedKeySaysWhichActivityItFellOutOf() throws {
        let inside = try fileErrors(Self.top + "    active_when: \"{{ true }}\"\n    template: generic\n  progress: 0.5\n")
        #expect(inside.last == "7:3 \"progress\" is a key of an activity, indented too little: it fell out of activity washer (line 4); indent it like that activity's other keys")
        let top = try fileErrors(Self.top + "    active_when: \"{{ true }}\"\n    template: generic\nprogress: 0.5\n")
        #expect(top.last == "7:1 \"progress\" is a key of an activity, indented too little: it fell out of activity washer (line 4); indent it like that activity's other keys")
    }

    /// check fails what every render would: a fixed bar that does not sum to 1, beside a templated value.
    @Test func aFixedSegmentedBarIsCheckedBesideATemplatedValue() throws {
        let errors = try fileErrors(Self.top + """
                active_when: "{{ true }}"
                template: progress
                progress:
                  style: segmented
                  value: "{{ 0.5 }}"
                  segments:
                    - { value: 0.5, fill_color: blue }
                    - { value: 0.6, fill_color: green }

            """)
        #expect(errors == ["8:7 segment values sum to 1.1; they must sum to 1.0"])
    }

    @Test func aTemplateThatAlwaysRendersTextIsRefusedForANumber() throws {
        let errors = try fileErrors(Self.top + """
                active_when: "{{ true }}"
                template: progress
                progress: { style: simple, value: "Washing {{ states('sensor.w') }}" }

            """)
        #expect(errors == ["7:39 this template always renders text (\"Washing \" around its expression), which is never a number; put only the expression inside the quotes, e.g. \"{{ … }}\""])
    }
}

extension RulesLoaderTests {
    /// `status.listen`: HOST:PORT or a bare PORT; port 0 takes a free port at start (the tests' daemons listen so, a port
    /// picked beforehand being free no longer when the daemon binds it); past 65,535, negative or text: refused.
    @Test func theStatusListenersPortMayBeZeroAndNoMoreThan65535() {
        #expect(RulesFile.StatusListener(parsing: "127.0.0.1:0") == RulesFile.StatusListener(parsing: "0"))
        #expect(RulesFile.StatusListener(parsing: "0.0.0.0:0")?.port == 0)
        #expect(RulesFile.StatusListener(parsing: "0.0.0.0:0")?.host == "0.0.0.0")
        #expect(RulesFile.StatusListener(parsing: "9321")?.host == "127.0.0.1")
        #expect(RulesFile.StatusListener(parsing: "[::1]:65535") == nil, "IPv6 is not HOST:PORT here")
        #expect(RulesFile.StatusListener(parsing: "127.0.0.1:00080")?.port == 80)
        for bad in ["127.0.0.1:65536", "127.0.0.1:-1", "-1", "65536", ":9321", "127.0.0.1:", "127.0.0.1:http", "",
                    "127.0.0.1:-0", "-0", "+0", "127.0.0.1:+80", "127.0.0.1: 80", "127.0.0.1:0x50", "127.0.0.1:000080", "١٢٣"] {
            #expect(RulesFile.StatusListener(parsing: bad) == nil, "\(bad)")
        }
    }
}
