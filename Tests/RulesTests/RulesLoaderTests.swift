import Foundation
import Rules
import Testing

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
            return failure.errors.map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" }
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
        #expect(failure.errors.map { "\($0.location.line):\($0.location.column) \($0.path): \($0.message)" } == [
            "1:61 homeassistant.ping_interval: must be longer than 0s",
            "1:79 homeassistant.pong_timeout: \"soon\" is not a duration; write 5s, 2m, 1h30m or 00:00:05",
        ])
    }

    @Test func aValidFileLoadsWithTheEntitiesItReads() throws {
        let folder = try ConfigFolder(["livebridge.yaml": Self.header + Self.washer, "secrets.yaml": "ha_token: llat-secret-xyz\n"])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        #expect(rules.activities.map(\.id) == ["washer"])
        #expect(rules.entityIDs == ["sensor.washer"])
        #expect(rules.activities[0].backend.name == "aivi")
        #expect(rules.homeAssistant?.token.secret == "llat-secret-xyz")
        #expect(rules.budget == RulesFile.Budget())
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

    @Test func unknownFilter() throws {
        let rule = Self.washer + "    footer_right: \"{{ states('sensor.washer') | percent }}\"\n"
        let found = try errors(rule)
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("14:49 activities.washer.footer_right: template error: unknown filter \"percent\"; supported: float") == true)
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
    }
}
