public import Dispatcher
import FoundationEssentials
public import HomeAssistant
import JSON
public import LiveActivity
import Platform

/// Home Assistant's own Live Activities: a `notify.mobile_app_…` service call over the live WebSocket connection.
///
/// While core restarts, `notify.mobile_app_*` answers `not_found` until `mobile_app` has set up again: such a push is
/// retried (the lane keeps it, in order, and sends it once the service is back), not dropped. Only a service that
/// stays missing while core runs, past `missingGrace`, is refused: a name that does not exist.
public struct HomeAssistantPushBackend: PushBackend {
    public let name: String
    public let allowsOneActiveJob = false
    /// nil: no Home Assistant connection is configured, and every push is refused with `not_connected`.
    let connection: HomeAssistantConnection?
    /// How long a service may be missing while core says RUNNING before its pushes are refused.
    let missingGrace: Duration
    private let missingSince = Locked<[String: ContinuousClock.Instant]>([:])

    public init(name: String, connection: HomeAssistantConnection?, missingGrace: Duration = .seconds(120)) {
        self.name = name
        self.connection = connection
        self.missingGrace = missingGrace
    }

    nonisolated(nonsending) public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        let parts = request.target.split(separator: ".", maxSplits: 1).map(String.init)
        guard LiveUpdateSchema.serviceProblem(request.target) == nil, parts.count == 2, let data = request.body.objectValue else {
            return DeliveryReport(.rejected(.invalidService), code: .invalidService)
        }
        guard let connection else { return DeliveryReport(.rejected(.notConnected), code: .notConnected) }
        var sent = data
        if let window = request.dismissalWindow, case .object(var fields)? = sent["data"] {
            // The final content's time on the Lock Screen counts from now, however long the end waited.
            fields["dismissal_date"] = .int(Int(Date().timeIntervalSince1970) + Int(window.components.seconds))
            sent["data"] = .object(fields)
        }
        do {
            _ = try await connection.callService(domain: parts[0], service: parts[1], data: sent)
            missingSince.withLock { $0[request.target] = nil }
            return DeliveryReport(.delivered)
        } catch {
            let code = (error as? HomeAssistantError)?.code ?? .unknownError
            if code == .notFound { return await serviceNotFound(request.target, connection) }
            // The link dropped after the call went: core may have run it. Starts and updates go at most once (a start
            // sent twice is a second activity on the phone; if one was lost, core turns the next update into the
            // start, and the next change updates). The end goes at least once: a second end finds no token in core
            // and goes out as a plain clear command, which the relay does not count and the phone does not show.
            if code == .disconnected, kind != .end { return DeliveryReport(.delivered, code: .disconnectedTakenAsSent) }
            if code.isTransient { return DeliveryReport(.retry(after: nil), code: .homeAssistant(code.rawValue)) }
            return DeliveryReport(.rejected(.homeAssistant(code.rawValue)), code: .homeAssistant(code.rawValue))
        }
    }

    /// `not_found`: core still starting, or the service not registered again yet, is waited for; a service missing
    /// while core runs for longer than the grace is refused.
    nonisolated(nonsending) private func serviceNotFound(_ service: String, _ connection: HomeAssistantConnection) async -> DeliveryReport {
        let waiting = DeliveryReport(.retry(after: .seconds(2)), code: .homeAssistant("not_found"))
        guard let config = try? await connection.getConfig(), config["state"]?.stringValue == "RUNNING" else { return waiting }
        if let services = try? await connection.getServices(), ServiceName.listed(service, in: services) { return waiting }
        let now = ContinuousClock.now
        let since = missingSince.withLock { missing in
            let since = missing[service, default: now]
            missing[service] = since
            return since
        }
        guard now - since >= missingGrace else { return waiting }
        return DeliveryReport(.rejected(.homeAssistant("not_found")), code: .homeAssistant("not_found"))
    }
}

/// `notify.mobile_app_phone` against `get_services`' answer (`{"notify": {"mobile_app_phone": {…}}}`).
enum ServiceName {
    static func listed(_ service: String, in services: JSONValue) -> Bool {
        let parts = service.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return false }
        return services[parts[0]]?[parts[1]] != nil
    }
}

extension LiveUpdateSchema: TransportService {
    public static func transport(_ parts: TransportParts) -> any PushBackend {
        HomeAssistantPushBackend(name: parts.name, connection: parts.connection as? HomeAssistantConnection)
    }
}
