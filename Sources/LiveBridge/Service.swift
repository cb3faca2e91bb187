/// Something that runs until it is done or cancelled (after swift-service-lifecycle's `Service`). Cancellation is the
/// graceful shutdown: the service finishes what is due within its own deadline, then returns. A service that cannot
/// go on throws.
public protocol Service: Sendable {
    func run() async throws
    /// Takes its configuration again (SIGHUP); a service without one ignores it.
    func reload() async
}

extension Service {
    public func reload() async {}
}
