public import FakePushServices
import FoundationEssentials
public import JSON
import Preview
import WebSocketTransport

/// `livebridge preview-server` and the demo's page: the five services answered as their documents say (the fakes,
/// taking any token, checking each body with LiveBridge's own schemas), and every activity they were shown drawn as
/// the phone would, at `/` (the page) and `/api/state` (the drawings, countdowns at the moment asked).
///
/// Why the fakes ship in the binary: a preview stands in for services the user has not signed up to, so it must answer
/// as they do — the fakes are exactly that, built from the services' published contracts. Their test-only controls
/// (scripted answers, an outage, a spent quota, a moved clock) stay unused here; the page and the drawing live here,
/// not in the fakes, so the tests' fakes carry no page.
public final class PreviewServer: Sendable {
    public let service: FakePushService

    public init(port: Int = 0, host: String = "127.0.0.1") throws {
        service = try FakePushService(port: port, acceptsAnyToken: true, host: host, pages: Self.page)
    }

    public var baseURL: String { service.baseURL }
    /// The services' contracts it accepts, a line each ("  Aivi: PATCH /activity/SLUG"), for the help.
    public static var contracts: String { FakePushService.contracts }

    public func stop() { service.stop() }
    /// Adds a line to the page's log (the demo's budget decisions).
    public func note(_ entry: JSONValue) { service.note(entry) }

    /// `{"activities": {...}, "log": [...]}`: each activity with its drawing (`svg`), rendered now so countdowns tick.
    public var state: JSONValue { Self.state(of: service) }

    static func state(of service: FakePushService) -> JSONValue {
        let (shown, log) = service.shown
        let now = Date().timeIntervalSince1970
        var drawn: [String: JSONValue] = [:]
        for (key, entry) in shown {
            guard case .object(var fields) = entry, let payload = fields["payload"] else { continue }
            fields["svg"] = .string(PreviewRenderer.svg(payload, at: now, title: key, ended: fields["ended"] == true))
            drawn[key] = .object(fields)
        }
        return .object(["activities": .object(drawn), "log": .array(log)])
    }

    static func page(_ path: String, _ service: FakePushService) -> HTTPServerResponse? {
        switch path {
        case "/": return HTTPServerResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(PreviewPage.html.utf8))
        case "/api/state": return HTTPServerResponse(status: 200, json: state(of: service).jsonText)
        default: return nil
        }
    }
}
