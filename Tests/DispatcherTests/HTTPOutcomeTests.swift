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

    /// A service that quotes the token it refused: its words go into logs, metrics and the unauthenticated /healthz,
    /// so the backend's secret is masked first, then the text is cut (a cut first could leave the token's start).
    @Test(arguments: [401, 403, 429, 500])
    func theBackendsTokenIsMaskedInTheServicesWords(status: Int) {
        let token = "AIVI-SECRET-TOKEN-xyz-0123456789"
        for padding in [0, 100, 110] {
            let text = String(repeating: "p", count: padding) + "invalid token " + token + " (Bearer)"
            let body = Array(("{\"error\":\"" + text + "\"}").utf8)
            let report = HTTPOutcome.classify(.success(HTTPResponse(status: status, body: body)), kind: .start, secrets: [token])
            let said = report.code?.description ?? ""
            #expect(!said.contains("AIVI-SECRET-TO"), "\(said)")
            if padding == 0 { #expect(said.contains("invalid token <token redacted> (Bearer)"), "\(said)") }
        }
    }
}
