import JSON
import Preview
import Testing

/// Payloads LiveBridge would never send, drawn anyway (the preview server takes pushes from anyone): no markup gets
/// out of its attribute or text, and no number traps the drawing.
struct HostilePayloadTests {
    static let at = 1_795_348_800.0

    @Test(arguments: [
        #"{"job_id":"j","layout":"progress","status":"running","progress":0.5,"accentColor":"\"/><script>alert(1)</script><rect fill=\""}"#,
        #"{"job_id":"j","layout":"default","status":"running","accentColor":"red' onload='alert(1)","message":"<img src=x onerror=alert(1)>"}"#,
        #"{"template":"progress","progress":{"style":"simple","value":0.5,"color":"\"><script>x</script>"},"header_left":{"value":"</text><script>x</script>"}}"#,
    ])
    func markupStaysText(payload: String) throws {
        let svg = PreviewRenderer.svg(try JSONParser.parse(payload), at: Self.at, title: "<b>title</b>")
        #expect(!svg.contains("<script"), "\(svg)")
        #expect(!svg.contains("<img") && !svg.contains("<b>") && !svg.contains("onload='"))
    }

    /// A hex colour or a CSS name is drawn; anything else falls back to the status colour.
    @Test func onlyColoursAreTakenAsAccents() throws {
        let named = PreviewRenderer.svg(try JSONParser.parse(#"{"job_id":"j","status":"running","accentColor":"Teal"}"#), at: Self.at)
        let hex = PreviewRenderer.svg(try JSONParser.parse(##"{"job_id":"j","status":"running","accentColor":"#00FF88"}"##), at: Self.at)
        let junk = PreviewRenderer.svg(try JSONParser.parse(#"{"job_id":"j","status":"running","accentColor":"url(javascript:x)"}"#), at: Self.at)
        #expect(named.contains("fill=\"teal\"") && hex.contains("fill=\"#00FF88\""))
        #expect(!junk.contains("javascript") && junk.contains("fill=\"#0a84ff\""))
    }

    @Test(arguments: [
        #"{"template":"generic","progress":1e300,"remaining_time":1e300}"#,
        #"{"template":"generic","progress":-1e300}"#,
        #"{"job_id":"j","layout":"progress","status":"running","progress":1e300}"#,
        #"{"template":"progress","progress":{"style":"segmented","value":1e300,"display":"split","segments":[{"value":1e300,"label":"a"},{"value":-1e300,"label":"b"}]}}"#,
        #"{"template":"steps","current_step":9223372036854775807,"total_steps":1}"#,
    ])
    func hugeNumbersAreClampedNotTrapped(payload: String) throws {
        let svg = PreviewRenderer.svg(try JSONParser.parse(payload), at: Self.at)
        #expect(svg.hasSuffix("</svg>\n"))
    }
}
