import JSON
public import LiveActivity
import WebSocketTransport

/// A service's fake: the conformance of its type (`PushService`, registered with its definition) here. The shared
/// server (`FakePushService`) hands each request to the fake whose requests it is.
protocol FakedService: PushService {
    /// The keys it takes unless a test says otherwise (`aivi-test-token`…).
    static var testAccounts: [String] { get }
    /// Whether a request of this method and path is one of its.
    static func serves(method: String, path: String) -> Bool
    /// Its requests, as its users read them (`PATCH /activity/SLUG`), for the preview server's help.
    static var routes: String { get }
    /// Its answer by its contract; `fake` holds the accounts, the shared records and the fakes' state.
    static func answer(_ request: HTTPServerRequest, _ body: JSONValue?, in fake: FakePushService) -> HTTPServerResponse
    /// Whether a request of its carries content the preview draws (PushWard's creation does not).
    static func draws(method: String, path: String) -> Bool
    /// The problems of a body it received, by LiveBridge's own schemas: what the preview refuses to draw.
    static func problems(_ body: JSONValue) -> [PayloadIssue]
}

extension FakedService {
    static func draws(method: String, path: String) -> Bool { true }
}

/// An account at a faked service: its key (a token, an ID) and the plan the service holds it to.
public struct FakeAccount: Sendable {
    public enum Plan: Sendable {
        case standard
        /// A free tier (Island Pulse's: one job at a time).
        case freeTier
        /// A key its app has not registered yet (Island Pulse's 404 DEVICE_NOT_REGISTERED).
        case unregistered
        /// A key that may change what exists but not create (PushWard's `activity:update` scope).
        case updateOnly
    }

    public let kind: BackendKind
    public let key: String
    public let plan: Plan

    public init(_ kind: BackendKind, _ key: String, plan: Plan = .standard) {
        self.kind = kind
        self.key = key
        self.plan = plan
    }
}

/// A fake's own part of the shared state (`FakePushService.State`), found by its type.
protocol FakeState: Sendable {
    init()
}

extension FakePushService.State {
    /// A fake's state, moved out while it changes: its dictionaries are not copied on every request.
    subscript<S: FakeState>(_ type: S.Type) -> S {
        get { services[ObjectIdentifier(type)] as? S ?? S() }
        _modify {
            var value = services.removeValue(forKey: ObjectIdentifier(type)) as? S ?? S()
            defer { services[ObjectIdentifier(type)] = value }
            yield &value
        }
    }
}

extension FakePushService {
    /// Every built-in service that has a fake, found once (the server asks them on every request).
    static let fakes: [any FakedService.Type] = BackendDefinition.builtInServices.compactMap { $0 as? any FakedService.Type }

    /// The fake whose requests these are.
    static func fake(method: String, path: String) -> (any FakedService.Type)? {
        fakes.first { $0.serves(method: method, path: path) }
    }

    /// The contracts it accepts, for the help: a line each, "  Aivi: PATCH /activity/SLUG".
    public static var contracts: String {
        fakes.map { "  \($0.definition.name): \($0.routes)" }.joined(separator: "\n")
    }
}
