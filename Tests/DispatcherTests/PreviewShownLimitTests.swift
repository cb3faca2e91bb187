import Testing
import JSON
@testable import FakePushServices

/// The preview page draws every activity it keeps on each look: it keeps the latest hundred, not every slug a client
/// makes up.
struct PreviewShownLimitTests {
    @Test func thePreviewKeepsTheHundredShownLast() throws {
        let service = try FakePushService(acceptsAnyToken: true)
        defer { service.stop() }
        let body: JSONValue = ["state": "ONGOING", "content": ["template": "generic", "progress": 0.5, "state": "washing"]]
        for n in 0..<130 { service.show("aivi/slug\(n)", body, ended: false) }
        let kept = service.shown.activities
        #expect(kept.count == FakePushService.shownLimit)
        #expect(kept["aivi/slug129"] != nil && kept["aivi/slug30"] != nil && kept["aivi/slug29"] == nil)
    }
}
