public import JSON
import Platform

/// Everything LiveBridge knows about one push service that is a fact rather than a request: how the rules file
/// spells it (its keys and templates), what names an activity there and what its requests look like, its
/// documented address and allowance, and its timing (the settle after a start, how long final content stays).
/// Rules, the dispatcher, the factory and the preview commands read it here instead of each switching on the kind;
/// adding a service starts with its definition and one line in `BackendDefinition.builtInServices`.
public final class BackendDefinition: Sendable {
    public let kind: BackendKind
    /// As its users write it: "Island Pulse".
    public let name: String
    /// The key that names an activity there (`slug`, `job_id`, `tag`, `stream_key`).
    public let idKey: String
    /// Why a text cannot name an activity there (nil: it can).
    public let idProblem: @Sendable (String) -> String?
    /// The methods of its requests (Home Assistant's is its `call_service`).
    public let methods: Set<String>
    /// The path its requests take before the id (`/activity/`); nil when its target is not an id path.
    public let idPath: String?
    /// Why a target is not one of its requests' (nil: it is), when not an id path.
    public let otherTarget: (@Sendable (String) -> String?)?
    /// The keys a backend of this type takes in the rules file.
    public let configKeys: [String]
    /// Whether the rules must give it a token.
    public let needsToken: Bool
    /// Its own templates, then the Aivi templates it shows in its vocabulary.
    public let templates: [String]
    /// How long an ended activity's final content stays when the rule does not say.
    public let defaultDismissAfter: Duration
    /// The wait after a start before an update or the end, when the rules do not say.
    public let defaultSettle: Duration
    /// Its documented request allowance per minute, kept on our side (nil: none documented).
    public let requestsPerMinute: Int?
    /// What the allowance is counted by: the service's address (PushWard: per client address) or an account there
    /// (ActivitySmith: per API key).
    public let allowanceCountedBy: AllowanceScope

    public enum AllowanceScope: Sendable {
        case address, account
    }
    /// Its documented address (nil: reached through the Home Assistant connection).
    public let baseURL: String?
    /// Its pushes go through the phone's Home Assistant push relay (its target is the phone's notify service): the
    /// relay's daily budget, the companion app's dismissals and Home Assistant's preconditions apply to it.
    public let spendsRelay: Bool
    /// What of a request the phone holds as content.
    public let contentShare: ContentShare
    /// How its requests carry the token (`Authorization: <scheme> <token>`) when it speaks plain HTTP.
    public let authScheme: String
    /// Takes out of a body what a small change can move (its bar, its timers), for `min_change`.
    public let movingParts: @Sendable (inout JSONValue) -> PayloadMeasure.MovingParts
    /// The codes of its answers LiveBridge acts on (its error bodies' `error` or `code`).
    public let codes: [ServiceCode]
    /// The field of a `oneAtATime` answer that says when the lock lifts (nil: it does not say).
    public let lockExpiryField: String?

    public init(kind: BackendKind, name: String, idKey: String, idProblem: @escaping @Sendable (String) -> String?, methods: Set<String>,
                idPath: String?, otherTarget: (@Sendable (String) -> String?)?, configKeys: [String], needsToken: Bool, templates: [String],
                defaultDismissAfter: Duration, defaultSettle: Duration, requestsPerMinute: Int?, baseURL: String?, spendsRelay: Bool,
                contentShare: ContentShare, authScheme: String = "Bearer", movingParts: @escaping @Sendable (inout JSONValue) -> PayloadMeasure.MovingParts = { _ in .init() },
                codes: [ServiceCode] = [], lockExpiryField: String? = nil, allowanceCountedBy: AllowanceScope = .account) {
        self.kind = kind
        self.name = name
        self.idKey = idKey
        self.idProblem = idProblem
        self.methods = methods
        self.idPath = idPath
        self.otherTarget = otherTarget
        self.configKeys = configKeys
        self.needsToken = needsToken
        self.templates = templates
        self.defaultDismissAfter = defaultDismissAfter
        self.defaultSettle = defaultSettle
        self.requestsPerMinute = requestsPerMinute
        self.baseURL = baseURL
        self.spendsRelay = spendsRelay
        self.contentShare = contentShare
        self.authScheme = authScheme
        self.movingParts = movingParts
        self.codes = codes
        self.lockExpiryField = lockExpiryField
        self.allowanceCountedBy = allowanceCountedBy
    }

    /// What its code `text` means, if LiveBridge acts on it.
    public func code(_ text: String) -> ServiceCode? { codes.first { $0.text == text } }

    /// Its code with this meaning (a transport that recognises an answer by its status says it in the service's words).
    public func code(meaning: ServiceCode.Meaning) -> ServiceCode? { codes.first { $0.meaning == meaning } }

    /// What of a request's body the phone holds as the Live Activity's content, for its size limit.
    public enum ContentShare: Sendable {
        /// The body less its `{"content":…,"state":"…"}` wrapper (Aivi, PushWard, ActivitySmith).
        case bodyLessWrapper
        /// The whole body (Island Pulse).
        case body
        /// Not measured here: the companion app builds the activity (Home Assistant).
        case none
    }

    /// The bytes of `request` the phone holds as content (nil: not measured).
    public func contentSize(_ request: BackendRequest) -> Int? {
        switch contentShare {
        case .bodyLessWrapper:
            return request.bodyBytes.count - #"{"content":,"state":""}"#.utf8.count - (request.body["state"]?.stringValue?.utf8.count ?? 0)
        case .body: return request.bodyBytes.count
        case .none: return nil
        }
    }

    /// Whether LiveBridge draws its content (`preview`, the preview server): not when the companion app builds it.
    public var isDrawnByPreview: Bool { contentShare != .none }

    /// The services whose content LiveBridge draws, for help and messages: "Aivi, Island Pulse, PushWard or ActivitySmith".
    public static var drawnServiceNames: String {
        sentence(builtInServices.map { $0.definition }.filter { $0.isDrawnByPreview }.map { $0.name }, "or")
    }

    /// Names as a sentence's list: "a, b or c".
    public static func sentence(_ names: [String], _ conjunction: String) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " \(conjunction) " + names.last!
    }

    /// Why `target` is not one of its requests' targets.
    public func targetProblem(_ target: String) -> String? {
        if let otherTarget { return otherTarget(target) }
        guard let prefix = idPath, target.hasPrefix(prefix), idProblem(String(target.dropFirst(prefix.count))) == nil else {
            return "\(OutsideText.quoted(target)) is not a \(kind.rawValue) request path (\(idPath ?? "")<id>)"
        }
        return nil
    }
}

extension BackendKind {
    /// This service's definition. A kind is only made for a registered service (`init?(rawValue:)`) or by a
    /// service's own code, so one not registered is a programming error.
    public var definition: BackendDefinition { service.definition }

    /// This service's type: what its other parts conform (`as? any RenderedService.Type`…).
    public var service: any PushService.Type {
        guard let service = BackendDefinition.registered(rawValue) else { preconditionFailure("no service registered as \(rawValue)") }
        return service
    }
}

extension BackendDefinition {
    /// The services LiveBridge ships with: the one place each is registered. Each is one type, its definition here in
    /// LiveActivity; its rendering, transport and fake are that type's conformances in the modules that hold them.
    public static let builtInServices: [any PushService.Type] = [AiviSchema.self, IslandPulseSchema.self, LiveUpdateSchema.self, PushWardSchema.self, ActivitySmithSchema.self]

    /// The built-in services by name: fixed for the process, read without a lock.
    private static let builtInByName = Dictionary(uniqueKeysWithValues: builtInServices.map { ($0.definition.kind.rawValue, $0) })

    static var builtIn: [BackendDefinition] { builtInServices.map { $0.definition } }

    /// Services added for the current task and what it starts (`with(services:)`), after the built-in ones.
    @TaskLocal private static var added: [any PushService.Type] = []

    /// Runs `body` with `services` registered beside the built-in ones, for it and the tasks it starts only: a service
    /// made up in a test is seen by the loader, the renderer and the factory it calls, and by no other test running
    /// at the same time (nothing global changes, so nothing can vanish under another reader).
    public static func with<R>(services: [any PushService.Type], _ body: () async throws -> R) async rethrows -> R {
        try await $added.withValue(added + services, operation: body)
    }

    static func registered(_ name: String) -> (any PushService.Type)? {
        if let service = builtInByName[name] { return service }
        let added = added
        return added.isEmpty ? nil : added.last { $0.definition.kind.rawValue == name }
    }

    static var all: [BackendDefinition] {
        builtIn + added.map { $0.definition }.filter { definition in !builtInServices.contains { $0.definition.kind == definition.kind } }
    }
}

/// A push service LiveBridge speaks to, as one type: its facts (`definition`) here; how rules reach it, how it is
/// sent and how it is faked are conformances of the same type where those live (Rules, Dispatcher, the fakes), found
/// by the kind. Registering the type (a line in `builtInServices`) is all it takes.
public protocol PushService: SendableMetatype {
    static var definition: BackendDefinition { get }
}

extension BackendDefinition {
    /// Long enough to read "Done" on the Lock Screen, short enough not to linger: five minutes.
    public static let lockScreenDismissAfter = Duration.seconds(300)
}
