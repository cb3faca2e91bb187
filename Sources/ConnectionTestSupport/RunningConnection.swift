public import HomeAssistant

/// For tests: a connection's `run` as a task of its own, ended by `stop()` — cancelled, then awaited (the daemon and
/// the commands run it as a child of their own task instead).
public struct RunningConnection: Sendable {
    let task: Task<Void, Never>

    /// Cancels the run and waits for the socket to close.
    public func stop() async {
        task.cancel()
        await task.value
    }
}

extension HomeAssistantConnection {
    /// Runs the connection, following `entityIDs` (nil: none), until the result's `stop()`.
    public func started(entityIDs: [String]?) async -> RunningConnection {
        await started(selection: entityIDs.map { EntitySelection(entityIDs: $0) })
    }

    /// Runs the connection, following what `selection` names, until the result's `stop()`. Returns once it has begun
    /// (a request's timeout then counts from a connection under way, not from a task still waiting for a thread —
    /// under ThreadSanitizer with every suite at once, that wait took seconds).
    public func started(selection: EntitySelection?) async -> RunningConnection {
        let running = RunningConnection(task: Task { await self.run(selection: selection) })
        while currentPhase == .idle { await Task.yield() }
        return running
    }
}
