import Foundation
import JSON
import LiveActivity
import Rules
import Testing
import Templates

/// Every example payload of the specifications, produced from entity states through a rule.
struct GoldenPayloadTests {
    static let rules = """
        backends:
          aivi: { type: aivi, token: t }
          pulse: { type: islandpulse, token: p }
        defaults: { backend: aivi }
        activities:
          washer:
            active_when: "{{ is_state('sensor.washer', 'running') }}"
            template: progress
            icon: washer
            header_left: { value: "{{ 'In progress' if is_state('sensor.washer', 'running') else 'Done' }}", text_color: green }
            header_right: "{{ (state_attr('sensor.washer', 'remaining_minutes') // 60) }}h {{ state_attr('sensor.washer', 'remaining_minutes') % 60 }}m"
            progress: { style: simple, value: "{{ states('sensor.washer_progress') | float(0) / 100 }}", color: blue }
            footer_left: Progress
            footer_right: "{{ states('sensor.washer_progress') | int }}%"
          ev:
            active_when: "{{ is_state('binary_sensor.ev_charging', 'on') }}"
            template: progress
            icon: bolt.car
            header_left: { value: "{{ states('sensor.ev_battery') | int }}%", text_color: green }
            header_right: "{{ states('sensor.ev_minutes_left') | int }} min left"
            progress:
              style: segmented
              value: "{{ states('sensor.ev_battery') | float / 100 }}"
              display: layered
              segments:
                - { value: 0.8, fill_color: green, track_color: gray, label: Standard }
                - { value: 0.2, fill_color: green, track_color: gray, track_fill: hatched, label: Extended }
            footer_left: { value: Supercharger, text_color: gray }
            footer_right: "Est. ${{ states('sensor.ev_cost') }}"
            compact_value: "{{ states('sensor.ev_battery') | int }}%"
          vacuum:
            active_when: "{{ is_state('vacuum.robo', 'cleaning') }}"
            template: monitor
            icon: robotic.vacuum.and.ellipsis
            left_column:
              value: { value: "{{ state_attr('vacuum.robo', 'activity') }}", text_color: indigo }
              footer: "In {{ state_attr('vacuum.robo', 'room') }}"
            right_column:
              value: "{{ state_attr('vacuum.robo', 'area') }} m²"
              footer: "Battery: {{ state_attr('vacuum.robo', 'battery_level') }}%"
          dryer:
            active_when: "{{ has_value('sensor.dryer_progress') }}"
            template: generic
            progress: "{{ states('sensor.dryer_progress') | float / 100 }}"
            state: In progress
            icon: washer
            remaining_time: "{{ ((state_attr('sensor.dryer_progress', 'finishes_at') | as_datetime) - now()).total_seconds() | int }}"
          deploy-api:
            backend: pulse
            active_when: "{{ true }}"
            template: default
            status: "{{ 'success' if is_state('sensor.deploy', 'done') else 'running' }}"
            message: "Deployed to production in {{ state_attr('sensor.deploy', 'seconds') }}s"
            icon: checkmark.circle.fill
            accentColor: "#00FF88"
          database-migration:
            backend: pulse
            active_when: "{{ true }}"
            template: progress
            status: running
            message: Migrating users table…
            metric: "Step {{ state_attr('sensor.migration', 'step') }}/5"
            progress: "{{ state_attr('sensor.migration', 'step') * 20 }}"
            accentColor: "#00CFFF"
          mrr-live:
            backend: pulse
            active_when: "{{ true }}"
            template: score
            status: running
            metric: "${{ states('sensor.mrr') }}"
            message: Monthly Recurring Revenue
            secondaryMetric: "+{{ state_attr('sensor.mrr', 'growth') }}%"
            accentColor: "#00FF88"
          game-score:
            backend: pulse
            active_when: "{{ true }}"
            template: sports
            status: success
            metricA: "{{ state_attr('sensor.game', 'home') }}"
            metricB: "{{ state_attr('sensor.game', 'away') }}"
            subA: Home
            subB: Away
            secondaryMetric: "{{ states('sensor.game') | upper }}"
          thermo:
            active_when: "{{ true }}"
            template: monitor
            icon: { name: thermometer.sun, rendering_mode: palette, primary_color: red, secondary_color: orange, color_rendering: gradient }
          p99-latency:
            backend: pulse
            active_when: "{{ true }}"
            template: score
            status: running
            metric: "{{ states('sensor.p99') }}ms"
            message: p99 response time
            secondaryMetric: HEALTHY
            icon: server.rack
          ab-test:
            backend: pulse
            active_when: "{{ true }}"
            template: sports
            status: running
            metricA: "{{ state_attr('sensor.ab', 'a') }}%"
            metricB: "{{ state_attr('sensor.ab', 'b') }}%"
            subA: Variant A
            subB: Variant B
            secondaryMetric: LIVE
            accentColor: "#AA88FF"
          deploy-prod:
            backend: pulse
            active_when: "{{ true }}"
            template: progress
            title: Production Deploy
            message: Running migrations...
            status: running
            theme: default
            metric: "Step {{ state_attr('sensor.migration', 'step') }}/5"
            progress: 0.4
            secondaryMetric: LIVE
            metricA: "3"
            metricB: "1"
            subA: HOME
            subB: AWAY
            icon: bolt.fill
            accentColor: "#00CFFF"
        """

    /// The final push of 000's migration example uses the same job_id as its first: a rules file of its own.
    static let finalRules = """
        backends:
          pulse: { type: islandpulse, token: p }
        activities:
          migration-done:
            backend: pulse
            job_id: database-migration
            active_when: "{{ true }}"
            template: progress
            status: "{{ 'success' if is_state('sensor.migration', 'done') else 'running' }}"
            message: "Migration complete. {{ state_attr('sensor.migration', 'rows') }} rows processed."
            metric: Done
            progress: "{{ 1.0 if is_state('sensor.migration', 'done') else 0.5 }}"
        """

    static let states: JSONValue = try! JSONParser.parse("""
        [
          {"entity_id": "sensor.washer", "state": "running", "attributes": {"remaining_minutes": 92}},
          {"entity_id": "sensor.washer_progress", "state": "65"},
          {"entity_id": "binary_sensor.ev_charging", "state": "on"},
          {"entity_id": "sensor.ev_battery", "state": "90"},
          {"entity_id": "sensor.ev_minutes_left", "state": "3"},
          {"entity_id": "sensor.ev_cost", "state": "4.85"},
          {"entity_id": "vacuum.robo", "state": "cleaning", "attributes": {"activity": "Mopping", "room": "living room", "area": 20.1, "battery_level": 87}},
          {"entity_id": "sensor.dryer_progress", "state": "35", "attributes": {"finishes_at": "2026-11-22T12:35:20+00:00"}},
          {"entity_id": "sensor.deploy", "state": "done", "attributes": {"seconds": 38}},
          {"entity_id": "sensor.migration", "state": "done", "attributes": {"step": 2, "rows": "1.2M"}},
          {"entity_id": "sensor.p99", "state": "142"},
          {"entity_id": "sensor.ab", "state": "live", "attributes": {"a": 4.2, "b": 3.8}},
          {"entity_id": "sensor.mrr", "state": "48,210", "attributes": {"growth": 4.2}},
          {"entity_id": "sensor.game", "state": "final", "attributes": {"home": 3, "away": 1}}
        ]
        """)

    /// The seeds' examples, verbatim.
    static let expected: [(String, String)] = [
        ("washer", ##"{ "template": "progress", "icon": "washer", "header_left": { "value": "In progress", "text_color": "green" }, "header_right": { "value": "1h 32m" }, "progress": { "style": "simple", "value": 0.65, "color": "blue" }, "footer_left": { "value": "Progress" }, "footer_right": { "value": "65%" }}"##),
        ("ev", ##"{ "template": "progress", "icon": "bolt.car", "header_left": { "value": "90%", "text_color": "green" }, "header_right": { "value": "3 min left" }, "progress": { "style": "segmented", "value": 0.90, "display": "layered", "segments": [ { "value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard" }, { "value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended" } ] }, "footer_left": { "value": "Supercharger", "text_color": "gray" }, "footer_right": { "value": "Est. $4.85" }, "compact_value": { "value": "90%" }}"##),
        ("vacuum", ##"{ "template": "monitor", "icon": "robotic.vacuum.and.ellipsis", "left_column": { "value": { "value": "Mopping", "text_color": "indigo" }, "footer": "In living room" }, "right_column": { "value": { "value": "20.1 m²" }, "footer": "Battery: 87%" }}"##),
        ("dryer", ##"{ "template": "generic", "progress": 0.35, "state": "In progress", "icon": "washer", "remaining_time": 2120}"##),
        ("deploy-api", ##"{ "job_id": "deploy-api", "layout": "default", "message": "Deployed to production in 38s", "status": "success", "icon": "checkmark.circle.fill", "accentColor": "#00FF88"}"##),
        ("database-migration", ##"{ "job_id": "database-migration", "layout": "progress", "message": "Migrating users table…", "metric": "Step 2/5", "progress": 0.4, "status": "running", "accentColor": "#00CFFF"}"##),
        ("mrr-live", ##"{ "job_id": "mrr-live", "layout": "score", "metric": "$48,210", "message": "Monthly Recurring Revenue", "secondaryMetric": "+4.2%", "status": "running", "accentColor": "#00FF88"}"##),
        ("thermo", ##"{ "template": "monitor", "icon": { "name": "thermometer.sun", "rendering_mode": "palette", "primary_color": "red", "secondary_color": "orange", "color_rendering": "gradient" }}"##),
        ("migration-done", ##"{ "job_id": "database-migration", "layout": "progress", "message": "Migration complete. 1.2M rows processed.", "metric": "Done", "progress": 1.0, "status": "success"}"##),
        ("p99-latency", ##"{ "job_id": "p99-latency", "layout": "score", "metric": "142ms", "message": "p99 response time", "secondaryMetric": "HEALTHY", "status": "running", "icon": "server.rack"}"##),
        ("ab-test", ##"{ "job_id": "ab-test", "layout": "sports", "metricA": "4.2%", "metricB": "3.8%", "subA": "Variant A", "subB": "Variant B", "secondaryMetric": "LIVE", "status": "running", "accentColor": "#AA88FF"}"##),
        ("deploy-prod", ##"{ "job_id": "deploy-prod", "title": "Production Deploy", "message": "Running migrations...", "status": "running", "action": "update", "layout": "progress", "theme": "default", "metric": "Step 2/5", "progress": 0.4, "secondaryMetric": "LIVE", "metricA": "3", "metricB": "1", "subA": "HOME", "subB": "AWAY", "icon": "bolt.fill", "accentColor": "#00CFFF"}"##),
        ("game-score", ##"{ "job_id": "game-score", "layout": "sports", "metricA": "3", "metricB": "1", "subA": "Home", "subB": "Away", "secondaryMetric": "FINAL", "status": "success"}"##),
    ]

    @Test(arguments: expected)
    func theSeedExampleComesOutOfItsRule(activity: String, example: String) throws {
        let folder = try ConfigFolder(["livebridge.yaml": activity == "migration-done" ? Self.finalRules : Self.rules])
        let rules = try RulesLoader.load(file: folder.file("livebridge.yaml"), environment: [:]).get()
        let rule = try #require(rules.activities.first { $0.id == activity })
        let context = EvaluationContext(states: try StatesFile.parse(Self.states), now: 1_795_348_800, timeZone: .utc)
        #expect(try ActivityRenderer.isActive(rule, in: context).get())
        var notes: [PayloadIssue] = []
        let request = try ActivityRenderer.render(rule, for: rule.targets[0], phase: .update, in: context, notes: &notes).get()
        #expect(notes.isEmpty, "\(notes)")
        let expected = try JSONParser.parse(example)
        switch request.kind {
        case .aivi:
            #expect(request.method == "PATCH" && request.target == "/activity/\(activity)")
            #expect(request.body["state"] == "ONGOING")
            #expect(request.body["content"] == expected)
        case .islandpulse:
            #expect(request.method == "POST" && request.target == "/notify")
            guard case .object(var body) = request.body, case .object(var seed) = expected else { Issue.record("no body"); return }
            #expect(body.removeValue(forKey: "action") == "update")
            // 001's complete example spells out the action; the others leave it to the lifecycle.
            seed["action"] = nil
            #expect(JSONValue.object(body) == JSONValue.object(seed))
        default:
            Issue.record("no \(request.kind.rawValue) example in the seeds")
        }
    }
}
