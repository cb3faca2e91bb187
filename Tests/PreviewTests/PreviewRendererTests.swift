import Foundation
import JSON
import Preview
import Testing

/// The drawings of the specifications' example payloads, compared byte for byte with golden files
/// (regenerate with LIVEBRIDGE_UPDATE_GOLDEN=1 after a deliberate change, and look at them).
struct PreviewRendererTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    /// 2026-11-22T12:00:00Z
    static let at = 1_795_348_800.0

    static let examples: [(String, String)] = [
        ("aivi-progress-simple", ##"{ "template": "progress", "icon": "washer", "header_left": { "value": "In progress", "text_color": "green" }, "header_right": { "value": "1h 32m" }, "progress": { "style": "simple", "value": 0.65, "color": "blue" }, "footer_left": { "value": "Progress" }, "footer_right": { "value": "65%" }}"##),
        ("aivi-progress-segmented", ##"{ "template": "progress", "icon": "bolt.car", "header_left": { "value": "90%", "text_color": "green" }, "header_right": { "value": "3 min left" }, "progress": { "style": "segmented", "value": 0.90, "display": "layered", "segments": [ { "value": 0.8, "fill_color": "green", "track_color": "gray", "label": "Standard" }, { "value": 0.2, "fill_color": "green", "track_color": "gray", "track_fill": "hatched", "label": "Extended" } ] }, "footer_left": { "value": "Supercharger", "text_color": "gray" }, "footer_right": { "value": "Est. $4.85" }, "compact_value": { "value": "90%" }}"##),
        ("aivi-progress-split-countdown", ##"{ "template": "progress", "icon": "timer", "header_left": { "value": "Laundry" }, "header_right": { "value": "2026-11-22T13:25:00+00:00", "formatter": "time_until" }, "progress": { "style": "segmented", "value": 0.5, "display": "split", "segments": [ { "value": 0.5, "fill_color": "teal", "label": "Wash" }, { "value": 0.3, "fill_color": "blue", "label": "Rinse" }, { "value": 0.2, "fill_color": "indigo", "label": "Spin" } ] }, "compact_value": { "value": "2026-11-22T13:25:00+00:00", "formatter": "time_until" }}"##),
        ("aivi-monitor", ##"{ "template": "monitor", "icon": "robotic.vacuum.and.ellipsis", "left_column": { "value": { "value": "Mopping", "text_color": "indigo" }, "footer": "In living room" }, "right_column": { "value": { "value": "20.1 m²" }, "footer": "Battery: 87%" }}"##),
        ("aivi-monitor-primary-right", ##"{ "template": "monitor", "icon": { "name": "thermometer.sun", "rendering_mode": "palette", "primary_color": "red", "secondary_color": "orange", "color_rendering": "gradient" }, "left_column": { "header": "Inside", "value": { "value": "21.5°" } }, "right_column": { "header": "Since", "value": { "value": "2026-11-22T11:30:00+00:00", "formatter": "time_since", "text_color": "orange" } }, "primary_column": "right"}"##),
        ("aivi-generic", ##"{ "template": "generic", "progress": 0.35, "state": "In progress", "icon": "washer", "remaining_time": 2120}"##),
        ("islandpulse-default", ##"{ "job_id": "deploy-api", "layout": "default", "message": "Deployed to production in 38s", "status": "success", "icon": "checkmark.circle.fill", "accentColor": "#00FF88"}"##),
        ("islandpulse-progress", ##"{ "job_id": "database-migration", "layout": "progress", "message": "Migrating users table…", "metric": "Step 2/5", "progress": 0.4, "status": "running", "accentColor": "#00CFFF"}"##),
        ("islandpulse-score", ##"{ "job_id": "mrr-live", "layout": "score", "metric": "$48,210", "message": "Monthly Recurring Revenue", "secondaryMetric": "+4.2%", "status": "running", "accentColor": "#00FF88"}"##),
        ("islandpulse-sports", ##"{ "job_id": "game-score", "layout": "sports", "metricA": "3", "metricB": "1", "subA": "Home", "subB": "Away", "secondaryMetric": "FINAL", "status": "success"}"##),
        ("islandpulse-failed", ##"{ "job_id": "backup", "layout": "progress", "message": "Disk full", "metric": "Step 4/5", "progress": 80, "status": "failed"}"##),
    ]

    @Test(arguments: examples)
    func matchesItsGoldenFile(name: String, payload: String) throws {
        let svg = PreviewRenderer.svg(try JSONParser.parse(payload), at: Self.at, title: name)
        let file = Self.golden.appendingPathComponent(name + ".svg")
        if ProcessInfo.processInfo.environment["LIVEBRIDGE_UPDATE_GOLDEN"] == "1" {
            try svg.write(to: file, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(svg == expected, "\(name) differs from Golden/\(name).svg")
    }

    @Test(arguments: examples)
    func isSelfContainedAndDeterministic(name: String, payload: String) throws {
        let json = try JSONParser.parse(payload)
        let svg = PreviewRenderer.svg(json, at: Self.at)
        #expect(svg == PreviewRenderer.svg(json, at: Self.at))
        #expect(!svg.contains("<image") && !svg.contains("@font-face") && !svg.contains("href="))
        #expect(svg.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http") == false)
    }

    @Test func timersShowTheirValueAtTheGivenTime() throws {
        let payload = try JSONParser.parse(Self.examples[2].1)
        #expect(PreviewRenderer.svg(payload, at: Self.at).contains(">1:25:00</text>"))
        #expect(PreviewRenderer.svg(payload, at: Self.at + 5040).contains(">1:00</text>"))
        let since = try JSONParser.parse(Self.examples[4].1)
        #expect(PreviewRenderer.svg(since, at: Self.at).contains(">30:00</text>"))
    }

    @Test func theFiguresThePhoneShowsAreInTheDrawing() throws {
        let svg = PreviewRenderer.svg(try JSONParser.parse(Self.examples[0].1), at: Self.at)
        for text in [">In progress<", ">1h 32m<", ">Progress<", ">65%<"] { #expect(svg.contains(text), "\(text)") }
        #expect(!svg.contains(">washer<"), "the symbol is drawn, its name is not printed: the phone does not print it")
        #expect(svg.contains("fill=\"#30d158\" font-weight=\"600\">In progress</text>"))
        let sports = PreviewRenderer.svg(try JSONParser.parse(Self.examples[9].1), at: Self.at)
        for text in [">3<", ">1<", ">FINAL<", ">Home<", ">Away<", ">3–1<"] { #expect(sports.contains(text), "\(text)") }
    }

    @Test func htmlWrapsTheDrawings() {
        let html = PreviewRenderer.html([("a & b", "<svg/>")])
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("<figure>\n<svg/><figcaption>a &amp; b</figcaption></figure>"))
    }
}
