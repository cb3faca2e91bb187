import Dispatcher
import HomeAssistant
import JSON
import LiveActivity

/// Home Assistant's own Live Activities: a `notify.mobile_app_…` service call over the live WebSocket connection.
public struct HomeAssistantPushBackend: PushBackend {
    public let name: String
    public let allowsOneActiveJob = false
    /// nil: no Home Assistant connection is configured, and every push is refused with `not_connected`.
    let connection: HomeAssistantConnection?

    public init(name: String, connection: HomeAssistantConnection?) {
        self.name = name
        self.connection = connection
    }

    public func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        let parts = request.target.split(separator: ".", maxSplits: 1).map(String.init)
        guard LiveUpdateSchema.serviceProblem(request.target) == nil, parts.count == 2, let data = request.body.objectValue else {
            return DeliveryReport(.rejected(code: "invalid_service"), code: "invalid_service")
        }
        guard let connection else { return DeliveryReport(.rejected(code: "not_connected"), code: "not_connected") }
        do {
            _ = try await connection.callService(domain: parts[0], service: parts[1], data: data)
            return DeliveryReport(.delivered)
        } catch {
            let code = (error as? HomeAssistantError)?.code ?? .unknownError
            if code.isTransient { return DeliveryReport(.retry(after: nil), code: code.rawValue) }
            return DeliveryReport(.rejected(code: code.rawValue), code: code.rawValue)
        }
    }
}
