import Foundation
import LiveActivity
import Rules
import Testing
import Templates
import JSON

/// PushWard in a rules file: its own templates with their fields and limits at line:column, an Aivi progress or
/// generic mapped to its generic, the options of an activity (priority, sound, time to live), one rule at every kind
/// of backend.
struct PushWardRulesTests {
    static let header = """
        backends:
          aivi: { type: aivi, token: t-aivi }
          pulse: { type: islandpulse, token: t-pulse }
          phone: { type: homeassistant, service: notify.mobile_app_phone }
          ward: { type: pushward, token: pw-key }
        defaults: { backend: ward }
        activities:

        """

    func load(_ activities: String) throws -> Result<RulesFile, ConfigErrors> { try RulesFixture(header: Self.header).load(activities) }

    func errors(_ activities: String) throws -> [String] { try RulesFixture(header: Self.header).errors(activities) }

    let context = EvaluationContext(states: [:], now: 1_795_348_800)

    @Test func aCountdownIsPushWardsOwnTemplateWithItsOptions() throws {
        let rules = try load("""
              pizza:
                active_when: "{{ true }}"
                template: countdown
                priority: 5
                sound: chime
                ended_ttl: 10m
                state: Baking
                icon: mdi:pizza
                end_date: "{{ (now() | as_timestamp + 600) | int }}"
                completion_message: Pizza is ready

            """).get()
        let rule = rules.activities[0]
        var notes: [PayloadIssue] = []
        let start = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(start.method == "PATCH" && start.target == "/activities/pizza")
        #expect(start.body == ["state": "ongoing", "priority": 5, "sound": "chime", "content": [
            "template": "countdown", "state": "Baking", "icon": "mdi:pizza", "end_date": 1_795_349_400, "completion_message": "Pizza is ready"]])
        #expect(start.creation == ["slug": "pizza", "name": "pizza", "priority": 5, "ended_ttl": 600], "created before it starts")
        // Its end is two-phase: the final content (no state: PushWard keeps the one it holds, so what it ended itself
        // stays ended), then ended five seconds later.
        let end = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .end, in: context, notes: &notes).get()
        #expect(end.body["state"] == nil && end.dismissal?.after == .seconds(5) && end.dismissal?.body["state"] == "ended")
        #expect(notes.isEmpty)
    }

    /// Past its end_date PushWard has ended a countdown itself: a completion frame would revive it for dismiss_after,
    /// so that end is `ended` at once; before it, the end is two-phase.
    @Test func aCountdownPastItsEndDateIsEndedAtOnce() throws {
        let rules = try load("""
              pizza:
                active_when: "{{ true }}"
                template: countdown
                state: Baking
                end_date: 1795349400

            """).get()
        let rule = rules.activities[0]
        var notes: [PayloadIssue] = []
        let before = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .end, in: context, notes: &notes).get()
        #expect(before.body["state"] == nil && before.dismissal != nil)
        let after = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .end, in: EvaluationContext(states: [:], now: 1_795_349_460),
                                                notes: &notes).get()
        #expect(after.body["state"] == "ended" && after.dismissal == nil)
    }

    @Test func anAiviProgressGoesToPushWardsGenericAndEveryKindAtOnce() throws {
        let rules = try load("""
              washer:
                backend: [aivi, pulse, phone, ward]
                active_when: "{{ true }}"
                template: progress
                tap_url: homeassistant://navigate/laundry
                progress: { style: simple, value: 0.4, color: teal }
                header_left: Washing
                footer_left: Cotton 40°

            """).get()
        let rule = rules.activities[0]
        #expect(rule.targets.map(\.name) == ["aivi", "pulse", "phone", "ward"])
        var notes: [PayloadIssue] = []
        let requests = try rule.targets.map { try ActivityRenderer.render(rule, for: $0, phase: .start, in: context, notes: &notes).get() }
        #expect(requests.map(\.kind) == [.aivi, .islandpulse, .homeassistant, .pushward])
        #expect(requests[3].body["content"] == ["template": "generic", "progress": 0.4, "state": "Washing", "subtitle": "Cotton 40°",
                                                "accent_color": "teal", "tap_action": ["url": "homeassistant://navigate/laundry"]])
        #expect(rules.notes.coercions.contains { $0.message.hasPrefix("on ward (PushWard) the Aivi progress template is PushWard's generic") })
    }

    @Test func mistakesAreNamedWhereTheyAreWritten() throws {
        #expect(try errors("""
              timer:
                slug: -bad
                priority: 11
                sound: chimes
                active_when: "{{ true }}"
                template: countdown
                state: Baking

            """) == [
            "9:5 activities.timer.end_date: is required",
            "9:11 activities.timer.slug: \"-bad\" is not a PushWard slug: a letter or digit, then letters, digits, _ and -, at most 128",
            "10:15 activities.timer.priority: \"11\" is not a priority from 0 to 10",
            "11:12 activities.timer.sound: unknown sound \"chimes\" (did you mean \"chime\"?)",
        ])
        #expect(try errors("""
              vacuum:
                active_when: "{{ true }}"
                template: sports

            """).first?.contains("template \"sports\" cannot be sent to pushward backend \"ward\"") == true)
    }

    @Test func boardLogTimelineAndMediaAreCheckedAtLineAndColumn() throws {
        #expect(try errors("""
              energy:
                active_when: "{{ true }}"
                template: board
                tiles:
                  - { label: Solar, value: "3.2", unit: kWh, trend: upward }
                  - { value: "1.1" }
                  - { label: A, value: "1" }
                  - { label: B, value: "2" }
                  - { label: C, value: "3" }
              backup:
                active_when: "{{ true }}"
                template: log
                lines: [{ text: Started, level: debug }]
              cpu:
                active_when: "{{ true }}"
                template: timeline
                value: { CPU: 72.5, GPU: 40 }
                units: { RAM: "%" }
                primary_series: Disk
              gpu:
                active_when: "{{ true }}"
                template: timeline
                value: { GPU: 40 }
                decimals: 11
              radio:
                active_when: "{{ true }}"
                template: media
                position_seconds: 300
                duration_seconds: 200
              player:
                active_when: "{{ true }}"
                template: media
                playback_state: rewinding

            """) == [
            "12:7 activities.energy.tiles: has 5 items; 1–4 allowed",
            "12:57 activities.energy.tiles[0].trend: unknown trend \"upward\"; expected one of: up, down, flat",
            "13:9 activities.energy.tiles[1].label: is required",
            "20:37 activities.backup.lines[0].level: unknown level \"debug\"; expected one of: info, warn, error",
            "25:12 activities.cpu.units.RAM: names no series of value (CPU, GPU)",
            "26:21 activities.cpu.primary_series: \"Disk\" names no series of value (CPU, GPU)",
            "31:15 activities.gpu.decimals: 11 is out of range 0–10",
            "35:23 activities.radio.position_seconds: 300 is past duration_seconds (200)",
            "40:21 activities.player.playback_state: unknown playback state \"rewinding\"; expected one of: playing, paused, stopped, buffering",
        ])
    }

    @Test func aBoardOfFiguresAndALogRenderAsPushWardTakesThem() throws {
        let rules = try load("""
              energy:
                active_when: "{{ true }}"
                template: board
                dismissal_ttl: 30m
                tiles:
                  - { label: Solar, value: "{{ 3.25 | round(1) }}", unit: kWh, trend: up, color: green }
                  - { label: Grid, value: "{{ 1 }}" }
              backup:
                active_when: "{{ true }}"
                template: log
                lines:
                  - { text: Snapshot taken, level: info, at: 1795348700 }
                  - Upload started

            """).get()
        var notes: [PayloadIssue] = []
        let board = try ActivityRenderer.render(rules.activities[0], for: rules.activities[0].targets[0], phase: .start, in: context, notes: &notes).get()
        #expect(board.body["content"] == ["template": "board", "tiles": [
            ["label": "Solar", "value": "3.2", "unit": "kWh", "trend": "up", "color": "green"], ["label": "Grid", "value": "1"]]])
        let end = try ActivityRenderer.render(rules.activities[0], for: rules.activities[0].targets[0], phase: .end, in: context, notes: &notes).get()
        #expect(end.dismissal?.body["dismissal_ttl"] == 1800 && end.body["dismissal_ttl"] == nil, "the Lock Screen time goes with ended")
        let log = try ActivityRenderer.render(rules.activities[1], for: rules.activities[1].targets[0], phase: .update, in: context, notes: &notes).get()
        #expect(log.body["content"] == ["template": "log", "lines": [["text": "Snapshot taken", "level": "info", "at": 1_795_348_700], ["text": "Upload started"]]])
        #expect(notes.isEmpty)
        #expect(try errors("""
              energy:
                active_when: "{{ true }}"
                template: board
                dismissal_ttl: 5h
                tiles: [{ label: Solar, value: "3" }]

            """) == ["11:20 activities.energy.dismissal_ttl: \"5h\" is longer than 4h, the longest iOS keeps an ended Live Activity"])
    }

    @Test func anAiviMonitorIsPushWardsBoard() throws {
        let rules = try load("""
              vacuum:
                active_when: "{{ true }}"
                template: monitor
                primary_column: right
                left_column: { header: Battery, value: { value: "{{ 87 }}%", text_color: green }, footer: Docked }
                right_column: { header: Back in, value: { value: "2026-11-22T12:40:00Z", formatter: time_until }, footer: Kitchen }

            """).get()
        var notes: [PayloadIssue] = []
        let request = try ActivityRenderer.render(rules.activities[0], for: rules.activities[0].targets[0], phase: .start, in: context, notes: &notes).get()
        // 1_795_348_800 is 2026-11-22T12:00:00Z: forty minutes before the vacuum is back.
        #expect(request.body["content"] == ["template": "board", "subtitle": "Kitchen · Docked", "tiles": [
            ["label": "Back in", "value": "40 min"], ["label": "Battery", "value": "87%", "color": "green"]]])
        #expect(rules.notes.coercions.contains { $0.message.hasPrefix("on ward (PushWard) the Aivi monitor template is PushWard's board") })
    }
}
