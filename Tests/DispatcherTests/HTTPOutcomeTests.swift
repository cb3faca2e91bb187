import Dispatcher
import HTTPClient
import Testing
import LiveActivity

/// What a service's answer says, taken in with bounds.
struct HTTPOutcomeTests {
    /// The code goes into logs, metrics and /healthz: cut where it comes in.
    @Test func aServicesErrorCodeIsCutWhereItComesIn() {
        let body = Array(("{\"error\":\"" + String(repeating: "x", count: 10_000) + "\"}").utf8)
        let report = HTTPOutcome.classify(.success(HTTPResponse(status: 401, body: body)), kind: .update)
        #expect(report.code == .service(String(repeating: "x", count: 120) + "…[9880 more bytes cut]"))
    }
}
