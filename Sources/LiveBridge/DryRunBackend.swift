import Dispatcher
import LiveActivity

/// `--dry-run`: every push is logged instead of sent, and counts as delivered.
struct DryRunBackend: PushBackend {
    let name: String
    let allowsOneActiveJob = false
    let logger: Logger

    nonisolated(nonsending) func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
        logger.info("dry run: would push", ["backend": name, "kind": kind.rawValue, "method": request.method,
                                           "target": request.target, "body": String(decoding: request.bodyBytes, as: UTF8.self)])
        return DeliveryReport(.delivered)
    }
}
