import Foundation
import JSON
@testable import Preview
import Testing

/// What the preview must get right beyond the goldens: an ended activity's final content with an "Ended" mark, long
/// texts cut to their column instead of running into the next, and a page that fits a phone's 390 points.
struct PreviewLayoutTests {
    static let at = 1_795_348_800.0

    /// Each `<text>`: its x, anchor, size, weight and shown text, in document order.
    func texts(_ svg: String) -> [(x: Double, anchor: String, size: Double, bold: Bool, text: String)] {
        let pattern = try! NSRegularExpression(pattern: #"<text x="([\d.]+)" y="[\d.]+" font-size="([\d.]+)" fill="[^"]*"( font-weight="\d+")?( text-anchor="(\w+)")?>([^<]*)</text>"#)
        return pattern.matches(in: svg, range: NSRange(svg.startIndex..., in: svg)).map { match in
            func group(_ i: Int) -> String? { Range(match.range(at: i), in: svg).map { String(svg[$0]) } }
            return (Double(group(1)!)!, group(5) ?? "start", Double(group(2)!)!, group(3) != nil, group(6)!)
        }
    }

    @Test func anEndedActivityShowsItsFinalContentMarkedEnded() throws {
        let final = try JSONParser.parse(#"{"state": "IDLE", "content": {"template": "monitor", "left_column": {"value": {"value": "Docked"}}}}"#)
        let svg = PreviewRenderer.svg(final, at: Self.at, title: "vacuum", ended: true)
        #expect(texts(svg).map(\.text).contains("Ended") && texts(svg).map(\.text).contains("Docked"))
        #expect(!PreviewRenderer.svg(final, at: Self.at, title: "vacuum").contains(">Ended<"))
    }

    /// The vacuum's long status beside its battery: in each row the left text ends before the right one begins.
    @Test func longTextsAreCutToTheirColumn() throws {
        let vacuum = try JSONParser.parse(#"""
            {"template": "monitor", "left_column": {"header": "Status", "value": {"value": "Returning to the charging dock"}},
             "right_column": {"header": "Battery", "value": {"value": "47%"}}}
            """#)
        let drawn = texts(PreviewRenderer.svg(vacuum, at: Self.at))
        let status = try #require(drawn.first { $0.text.hasPrefix("Returning") && $0.size == 30 })
        #expect(status.text.hasSuffix("…"))
        // The Lock Screen card spans 10…390; the left column from 26, the right from 208 (both inside a 10-point offset).
        #expect(26 + estimate(status.text, size: 30, bold: true) <= 208, "\(status.text) runs into the right column")
        let progress = try JSONParser.parse(#"""
            {"template": "progress", "progress": {"style": "simple", "value": 0.5},
             "header_left": {"value": "Returning to the charging dock after mopping"}, "header_right": {"value": "47% · 12 min left"}}
            """#)
        let row = texts(PreviewRenderer.svg(progress, at: Self.at)).filter { $0.size == 20 }
        let left = try #require(row.first { $0.anchor == "start" }), right = try #require(row.first { $0.anchor == "end" })
        #expect(left.x + estimate(left.text, size: 20, bold: true) < right.x - estimate(right.text, size: 20, bold: true))
    }

    /// The page's cards scale to the width (a 390-point phone) and the log has column headings.
    @Test func thePageFitsAPhoneAndItsLogHasHeadings() {
        #expect(PreviewPage.html.contains(".card svg { display: block; width: 100%; height: auto; }"))
        #expect(PreviewPage.html.contains(".card { border-radius: 12px; overflow: hidden; width: 100%; max-width: 400px;"))
        #expect(PreviewPage.html.contains("<th class=\"time\">Time</th><th class=\"activity\">Activity</th><th>Push or budget decision</th>"))
        #expect(!PreviewPage.html.contains("opacity"), "an ended card is marked, not dimmed")
    }

    /// The renderer's own estimate of San Francisco's proportions.
    func estimate(_ text: String, size: Double, bold: Bool) -> Double { TextWidth.of(text, size: size, weight: bold ? 700 : 400) }
}

/// The SF Symbols the examples and blueprints use are drawn as our own outlines; any other shows its initial.
struct SymbolGlyphTests {
    @Test(arguments: ["washer", "dryer", "dishwasher", "timer", "pause.circle", "bolt.car", "bolt.fill", "robotic.vacuum",
                      "robotic.vacuum.and.ellipsis", "checkmark.circle.fill", "server.rack", "thermometer.sun", "exclamationmark.triangle",
                      "printer.filled.and.paper", "battery.100.bolt", "clock", "house", "lightbulb", "leaf", "flame"])
    func aKnownSymbolIsDrawn(name: String) throws {
        let svg = PreviewRenderer.svg(["template": "generic", "icon": .string(name), "progress": 0.5], at: 0)
        #expect(svg.contains("stroke=\"#ffffff\" stroke-width=\"2\""), "\(name) is drawn as an outline")
        #expect(!svg.contains("text-anchor=\"middle\">\(name.first!.uppercased())</text>"), "\(name) is not its initial")
    }

    @Test func anUnknownSymbolShowsItsInitial() {
        let svg = PreviewRenderer.svg(["template": "generic", "icon": "sparkles.tv", "progress": 0.5], at: 0)
        #expect(svg.contains("text-anchor=\"middle\">S</text>") && !svg.contains("stroke-width=\"2\""))
    }
}

/// PushWard's templates drawn on the same card: the state, the template's figure, the bar, the subtitle.
struct PushWardPreviewTests {
    func texts(_ payload: JSONValue, at now: Double = 1_000) -> [String] {
        let svg = PreviewRenderer.svg(payload, at: now)
        return svg.components(separatedBy: "</text>").compactMap { $0.components(separatedBy: ">").last }.filter { !$0.isEmpty }
    }

    @Test func eachTemplateShowsItsFigure() {
        #expect(texts(["state": "ongoing", "content": ["template": "generic", "state": "Washing", "subtitle": "Cotton 40°", "progress": 0.4]])
            .starts(with: ["Lock Screen", "•", "Washing", "Cotton 40°"]), "the neutral disc (no icon), the state, the subtitle")
        #expect(texts(["state": "ongoing", "content": ["template": "countdown", "state": "Pizza", "end_date": 1_600]]).contains("10:00"))
        #expect(texts(["state": "ongoing", "content": ["template": "steps", "state": "Printing", "total_steps": 5, "current_step": 2]]).contains("Step 2/5"))
        #expect(texts(["state": "ongoing", "content": ["template": "alert", "state": "Leak", "severity": "critical"]]).contains("Critical"))
        #expect(texts(["state": "ended", "content": ["template": "gauge", "state": "Tank", "value": 40, "min_value": 0, "max_value": 80, "unit": "L"]])
            .contains("40 L"))
    }

    @Test func boardLogTimelineAndMediaShowTheirFigures() {
        let board = texts(["state": "ongoing", "content": ["template": "board", "tiles": [
            ["label": "Solar", "value": "3.2", "unit": "kWh", "trend": "up"], ["label": "Grid", "value": "1.1"], ["label": "Battery", "value": "80%"]]]])
        #expect(board.contains("Solar") && board.contains("3.2 kWh ↑") && board.contains("Grid") && board.contains("1.1"))
        #expect(!board.contains("Battery"), "two tiles fit the card, as two monitor columns")
        let log = texts(["state": "ongoing", "content": ["template": "log", "lines": [["text": "Snapshot taken"], ["text": "Upload started"]]]])
        #expect(log.starts(with: ["Lock Screen", "•", "Upload started", "Snapshot taken"]), "the newest line first, the one before below")
        #expect(texts(["state": "ongoing", "content": ["template": "timeline", "value": ["CPU": 72.5, "GPU": 40], "primary_series": "GPU", "units": ["GPU": "%"]]])
            .contains("40 %"))
        let media = texts(["state": "ongoing", "content": ["template": "media", "media_title": "Blue in Green", "position_seconds": 90, "duration_seconds": 337]])
        #expect(media.contains("Blue in Green") && media.contains("1:30 / 5:37"))
    }
}

/// ActivitySmith's stream types drawn on the same card.
struct ActivitySmithPreviewTests {
    func texts(_ payload: JSONValue) -> [String] {
        PreviewRenderer.svg(payload, at: 0).components(separatedBy: "</text>").compactMap { $0.components(separatedBy: ">").last }.filter { !$0.isEmpty }
    }

    @Test func eachTypeShowsItsFigure() {
        #expect(texts(["content_state": ["type": "progress", "title": "Backup", "subtitle": "nas", "percentage": 42]]).contains("42%"))
        #expect(texts(["content_state": ["type": "segmented_progress", "title": "Deploy", "number_of_steps": 4, "current_step": 2]]).contains("2/4"))
        #expect(texts(["content_state": ["type": "stats", "title": "Shop", "metrics": [["label": "Revenue", "value": "4,210", "unit": "€"]]]]).contains("4,210 €"))
        #expect(texts(["content_state": ["type": "alert", "title": "Door", "message": "Front door open"]]).contains("Front door open"))
        #expect(texts(["content_state": ["type": "timer", "title": "Oven", "duration_seconds": 1500]]).contains("25:00"))
        #expect(texts(["content_state": ["type": "timer", "title": "Run", "counts_down": false]]).contains("0:00"))
    }
}
