import JSON
import LiveActivity
import Testing

/// Every example payload of the specifications (../shared/seeds) validates and comes out unchanged;
/// each kind of mistake is named with its path.
struct PayloadSchemaTests {
    static let aiviExamples = [
        ##"{ "template": "progress", "icon": "washer", "header_left": { "value": "In progress", "text_color": "green" }, "header_right": { "value": "1h 32m" }, "progress": { "style": "simple", "value": 0.65, "color": "blue" }, "footer_left": { "value": "Progress" }, "footer_right": { "value": "65%" }}"##,
        ##"{ "template": "progress", "icon": "bolt.car", "header_left": { "value": "90%", "text_color": "green" }, "header_right": { "value": "3 min left" }, "progress": { "style": "segmented", "value": 0.90, "display": "layered", "segments": [ { "value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard" }, { "value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended" } ] }, "footer_left": { "value": "Supercharger", "text_color": "gray" }, "footer_right": { "value": "Est. $4.85" }, "compact_value": { "value": "90%" }}"##,
        ##"{ "template": "monitor", "icon": "robotic.vacuum.and.ellipsis", "left_column": { "value": { "value": "Mopping", "text_color": "indigo" }, "footer": "In living room" }, "right_column": { "value": { "value": "20.1 m²" }, "footer": "Battery: 87%" }}"##,
        ##"{ "template": "generic", "progress": 0.35, "state": "In progress", "icon": "washer", "remaining_time": 2120}"##,
        ##"{ "template": "monitor", "icon": { "name": "thermometer.sun", "rendering_mode": "palette", "primary_color": "red", "secondary_color": "orange", "color_rendering": "gradient" }}"##,
    ]

    static let islandPulseExamples = [
        ##"{ "job_id": "deploy-api", "layout": "default", "message": "Deployed to production in 38s", "status": "success", "icon": "checkmark.circle.fill", "accentColor": "#00FF88"}"##,
        ##"{ "job_id": "database-migration", "layout": "progress", "message": "Migrating users table…", "metric": "Step 2/5", "progress": 0.4, "status": "running", "accentColor": "#00CFFF"}"##,
        ##"{ "job_id": "database-migration", "layout": "progress", "message": "Migration complete. 1.2M rows processed.", "metric": "Done", "progress": 1.0, "status": "success"}"##,
        ##"{ "job_id": "mrr-live", "layout": "score", "metric": "$48,210", "message": "Monthly Recurring Revenue", "secondaryMetric": "+4.2%", "status": "running", "accentColor": "#00FF88"}"##,
        ##"{ "job_id": "p99-latency", "layout": "score", "metric": "142ms", "message": "p99 response time", "secondaryMetric": "HEALTHY", "status": "running", "icon": "server.rack"}"##,
        ##"{ "job_id": "game-score", "layout": "sports", "metricA": "3", "metricB": "1", "subA": "Home", "subB": "Away", "secondaryMetric": "FINAL", "status": "success"}"##,
        ##"{ "job_id": "ab-test", "layout": "sports", "metricA": "4.2%", "metricB": "3.8%", "subA": "Variant A", "subB": "Variant B", "secondaryMetric": "LIVE", "status": "running", "accentColor": "#AA88FF"}"##,
        ##"{ "job_id": "deploy-prod", "title": "Production Deploy", "message": "Running migrations...", "status": "running", "action": "update", "layout": "progress", "theme": "default", "metric": "Step 2/5", "progress": 0.4, "secondaryMetric": "LIVE", "metricA": "3", "metricB": "1", "subA": "HOME", "subB": "AWAY", "icon": "bolt.fill", "accentColor": "#00CFFF"}"##,
    ]

    @Test(arguments: aiviExamples)
    func aiviSeedExamplesAreValidAndUnchanged(_ text: String) throws {
        let example = try JSONParser.parse(text)
        let (normalized, issues) = PayloadNormalizer.normalize(example, as: AiviSchema.content)
        #expect(issues.isEmpty, "\(issues)")
        #expect(normalized == example)
    }

    @Test(arguments: islandPulseExamples)
    func islandPulseSeedExamplesAreValidAndUnchanged(_ text: String) throws {
        let example = try JSONParser.parse(text)
        let (normalized, issues) = PayloadNormalizer.normalize(example, as: .object(IslandPulseSchema.body))
        #expect(issues.isEmpty, "\(issues)")
        #expect(normalized == example)
    }

    func issues(_ json: JSONValue, _ schema: FieldSchema = AiviSchema.content) -> [String] {
        PayloadNormalizer.normalize(json, as: schema).1.map(\.description)
    }

    /// A typed field reads a template's text as Home Assistant's native types would (Python's literal_eval).
    @Test(arguments: [("0.5", 0.5), ("1e3", 1000), ("1_000", 1000), ("0x1F", 31), ("-7.5", -7.5), (" 42 ", 42), (".5", 0.5), ("+3", 3)])
    func renderedNumbersAreReadAsPythonLiterals(text: String, expected: Double) {
        let (value, issues) = PayloadNormalizer.normalize(.string(text), as: .number(-1e6...1e6))
        #expect(issues.isEmpty)
        #expect(value == .double(expected))
    }

    @Test(arguments: ["nan", "inf", "007", "1__0", "_1", "0x", "1 000", "5%"])
    func textThatIsNoPythonNumberIsNotANumber(text: String) {
        let (value, issues) = PayloadNormalizer.normalize(.string(text), as: .number(-1e6...1e6))
        #expect(value == nil)
        #expect(issues.map(\.description) == ["expected a number, got \"\(text)\""])
    }

    @Test func shorthandsExpandAndTextAndNumbersAreCoerced() throws {
        let (normalized, issues) = PayloadNormalizer.normalize(
            ["template": "progress", "progress": ["style": "simple", "value": "0.5"], "compact_value": 50, "header_left": "Washing",
             "footer_left": ""],
            as: AiviSchema.content)
        #expect(issues.isEmpty)
        #expect(normalized == ["template": "progress", "progress": ["style": "simple", "value": 0.5],
                               "compact_value": ["value": "50"], "header_left": ["value": "Washing"]])
    }

    @Test func mistakesAreNamedWithTheirPath() {
        #expect(issues(["template": "progress", "progress": ["style": "simple", "value": 0.5, "color": "grey"]])
                == ["progress.color: unknown colour \"grey\" (did you mean \"gray\"?)"])
        #expect(issues(["template": "progress", "progress": ["style": "simple", "value": 1.5]])
                == ["progress.value: 1.5 is out of range 0–1"])
        #expect(issues(["template": "progress", "progress": ["style": "segmented", "value": 0.5, "segments": [
            ["value": 0.5, "fill_color": "green"], ["value": 0.4, "fill_color": "blue"]]]])
                == ["progress.segments: segment values sum to 0.9; they must sum to 1.0"])
        let five: JSONValue = .array(Array(repeating: ["value": 0.2, "fill_color": "green"], count: 5))
        #expect(issues(["template": "progress", "progress": ["style": "segmented", "value": 0.5, "segments": five]])
                == ["progress.segments: has 5 items; 1–4 allowed"])
        #expect(issues(["template": "progres"]) == ["template: unknown template \"progres\" (did you mean \"progress\"?)"])
        #expect(issues(["template": "monitor", "left_colum": ["value": "x"]])
                == ["left_colum: unknown key \"left_colum\" (did you mean \"left_column\"?)"])
        #expect(issues(["template": "generic"]) == ["progress: is required"])
        #expect(issues(["template": "generic", "progress": 0.1, "tap_url": "not a url"])
                == ["tap_url: \"not a url\" is not a URL: it has no scheme (https://, homeassistant://…)"])
        #expect(issues(["template": "progress", "progress": ["style": "simple", "value": 0.1],
                        "header_right": ["value": "soon", "formatter": "time_until"]])
                == ["header_right.value: \"soon\" is not an ISO 8601 timestamp, which time_until needs"])
    }

    @Test func islandPulseRules() {
        let schema = FieldSchema.object(IslandPulseSchema.body)
        #expect(issues(["job_id": "bad id!", "message": "x"], schema)
                == ["job_id: job_id \"bad id!\" may hold only letters, digits, _ and -"])
        #expect(issues(["job_id": .string(String(repeating: "a", count: 65)), "message": "x"], schema).first?.hasSuffix("must be 1–64 characters") == true)
        #expect(issues(["job_id": "game", "layout": "sports", "metricA": "1234567", "message": "x"], schema)
                == ["metricA: \"1234567\" is 7 characters; the sports layout shows at most 6"])
        #expect(issues(["job_id": "j"], schema) == ["message: is required to start or update"])
        #expect(issues(["job_id": "j", "action": "end"], schema).isEmpty)
        #expect(issues(["job_id": "j", "message": "m", "accentColor": "gren"], schema)
                == ["accentColor: unknown colour \"gren\" (did you mean \"green\"?); use #RRGGBB or a CSS colour name"])
        #expect(PayloadNormalizer.normalize(["job_id": "j", "message": "m", "progress": 40], as: schema).0?["progress"] == .double(0.4))
        #expect(issues(["job_id": "j", "message": "m", "progress": 140], schema) == ["progress: 140 is out of range 0–1 (or 0–100 as a percentage)"])
    }

    @Test func homeAssistantLiveUpdates() {
        let (fields, problems) = PayloadNormalizer.normalize(["tag": "washer", "title": "Washer", "message": "Washing", "progress": "65",
                                                              "chronometer": true, "when": 1795348800], as: .object(LiveUpdateSchema.fields))
        #expect(problems.isEmpty)
        let data = LiveUpdateSchema.serviceData(fields!.objectValue!)
        #expect(data == ["message": "Washing", "title": "Washer", "data": ["live_update": true, "tag": "washer", "progress": 65,
                                                                            "chronometer": true, "when": 1795348800.0]])
        // The end in one push: clear_notification with the final content as the relay's content_state, kept until
        // dismissal_date; never silent, no top-level title (the relay would alert with it).
        var final = fields!.objectValue!
        final["silent"] = true
        final["notification_icon"] = "mdi:washing-machine"
        #expect(LiveUpdateSchema.endData(final, dismissalDate: 1795349100, now: 1795348800) == ["message": "clear_notification", "data": [
            "tag": "washer", "dismissal_date": 1795349100,
            "content_state": ["title": "Washer", "message": "Washing", "progress": 65, "chronometer": true, "countdown_end": 1795348800,
                              "icon": "mdi:washing-machine"]]])
        let end = BackendRequest.homeAssistant(backend: "phone", service: "notify.mobile_app_phone", fields: final, kind: .end,
                                               dismissAfter: .seconds(300), now: 1795348800.5)
        #expect(end.body["data"]?["dismissal_date"] == 1795349100 && end.dismissal == nil, "one push, nothing pending")
        let schema = FieldSchema.object(LiveUpdateSchema.fields)
        #expect(issues(["tag": "t", "message": "m", "relevance_score": 2], schema).first?.hasPrefix("relevance_score:") == true)
        #expect(issues(["tag": .string(String(repeating: "t", count: 65)), "message": "m"], schema).first?.hasSuffix("is not 1 to 64 characters") == true)
        #expect(issues(["tag": "washer 1", "message": "m"], schema) == [#"tag: "washer 1" holds " "; a tag is letters, digits, _ and -"#])
        #expect(issues(["tag": "t", "message": "m", "progress": 12.5], schema).first?.hasPrefix("progress:") == true, "the app drops floats")
        #expect(issues(["tag": "t", "message": "m", "notification_icon": "washer"], schema)
            == [#"notification_icon: "washer" is not an mdi: icon (e.g. mdi:washing-machine)"#])
        #expect(issues(["tag": "t", "message": "m", "progress_bar_direction": "up"], schema).count == 1)
        #expect(issues(["tag": "wash-er_2", "message": "m", "url": "homeassistant://navigate/lovelace/laundry", "notification_icon": "mdi:washing-machine",
                        "notification_icon_color": "#2196F3", "progress_bar_direction": "decreasing", "when_relative": true], schema) == [])
    }

    /// Issues at the same path come in one order whatever order the payload's keys are kept in: a key unknown at its
    /// level first, then the fields in the schema's order (here a top-level key "left_column.foo" and an unknown
    /// "foo" inside left_column both stand at left_column.foo). Extra unknown keys change how the payload's keys are
    /// laid out, so a pass in their order would show both orders among these payloads.
    @Test func issuesAtOnePathKeepTheirOrder() {
        for extra in 0..<48 {
            var members: [String: JSONValue] = ["template": "monitor", "left_column.foo": 1, "left_column": ["foo": 1]]
            for n in 0..<extra { members["x\(n)"] = .int(n) }
            let told = issues(.object(members)).filter { $0.hasPrefix("left_column.") }
            #expect(told == ["left_column.foo: unknown key \"left_column.foo\"", "left_column.foo: unknown key \"foo\"",
                             "left_column.value: is required"], "with \(extra) extra keys")
        }
    }
}
