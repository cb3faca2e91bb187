/// How a listener keeps idle, slow or numerous sockets from starving the requests that matter (a watchdog's
/// `/healthz`): at most `perClient` sockets from one address, a whole request within `deadline` of connecting (or of
/// the last answer), and the last `reserve` of its sockets for `reservedPaths` only. When an address or the listener
/// is full, the oldest socket still waiting for its request makes room for the new one: a flood of idle sockets
/// churns itself, and a health check, which sends its request at once, always gets through.
public struct ListenerLimits: Sendable {
    /// Sockets open at once from one address.
    public var perClient: Int
    /// From connecting (or the last answer) to a complete request.
    public var deadline: Duration
    /// How many of the listener's sockets only `reservedPaths` may use.
    public var reserve: Int
    public var reservedPaths: Set<String>

    public init(perClient: Int, deadline: Duration, reserve: Int = 0, reservedPaths: Set<String> = []) {
        self.perClient = perClient
        self.deadline = deadline
        self.reserve = reserve
        self.reservedPaths = reservedPaths
    }
}

/// A listener's bookkeeping of who is connected, under its `ListenerLimits`. Confined to its loop's thread.
struct ListenerGuard {
    typealias Limits = ListenerLimits

    /// One accepted socket: where it comes from, whether it is one of the reserve, the deadline it is under.
    struct Client {
        /// Unique over the listener's life: a timer for an earlier socket at the same address in memory finds another.
        let id: Int
        let peer: String
        let reserved: Bool
        /// Bumped whenever a request completes or the deadline is set again: an older timer finds it changed.
        var round = 0
        var waiting = true
    }

    let limits: Limits
    /// The listener's capacity (`maximumConnections`).
    let capacity: Int
    private(set) var clients: [OpaquePointer: Client] = [:]
    private var open: [String: Int] = [:]
    /// Addresses admitted at the network level, by socket, until their connection is seen.
    private var admitted: [Int32: String] = [:]
    private var nextID = 0

    init(limits: Limits, capacity: Int) {
        self.limits = limits
        self.capacity = capacity
    }

    /// A new socket from `peer`: admitted, with the socket to close to make room (that address's oldest one still
    /// waiting for a request) when the address has `perClient` open; refused when all of those are busy.
    mutating func admit(socket: Int32, peer: String) -> (admitted: Bool, evict: OpaquePointer?) {
        let pending = admitted.values.reduce(0) { $0 + ($1 == peer ? 1 : 0) }
        var evict: OpaquePointer?
        if open[peer, default: 0] + pending >= limits.perClient {
            guard let oldest = oldestWaiting(from: peer) else { return (false, nil) }
            evict = oldest
            forget(oldest)
        }
        admitted[socket] = peer
        return (true, evict)
    }

    /// The socket still waiting for its request that has waited longest (from `peer`, or from anyone).
    private func oldestWaiting(from peer: String? = nil) -> OpaquePointer? {
        clients.filter { $0.value.waiting && (peer == nil || $0.value.peer == peer) }.min { $0.value.id < $1.value.id }?.key
    }

    /// A socket that is being closed to make room: no longer counted (its close comes later).
    private mutating func forget(_ wsi: OpaquePointer) {
        closed(wsi)
    }

    /// The connection of an admitted socket, and the socket to close when the listener is nearly full (the oldest
    /// one still waiting for a request); nil when it is known already or was never admitted.
    mutating func connected(_ wsi: OpaquePointer, socket: Int32) -> (client: Client, evict: OpaquePointer?)? {
        guard clients[wsi] == nil, let peer = admitted.removeValue(forKey: socket) else { return nil }
        // At capacity (libwebsockets takes a few more file descriptors than that, so the next one is still accepted).
        var evict: OpaquePointer?
        if capacity != .max, clients.count >= capacity - 1, let oldest = oldestWaiting() {
            evict = oldest
            forget(oldest)
        }
        nextID += 1
        let client = Client(id: nextID, peer: peer, reserved: clients.count >= capacity - limits.reserve)
        clients[wsi] = client
        open[peer, default: 0] += 1
        return (client, evict)
    }

    /// A complete request arrived: whether it may be served (a reserved socket serves `reservedPaths` only).
    mutating func requested(_ wsi: OpaquePointer, path: String) -> Bool {
        guard var client = clients[wsi] else { return true }
        client.waiting = false
        client.round += 1
        clients[wsi] = client
        return !client.reserved || limits.reservedPaths.contains(path)
    }

    /// An answer went out and the socket stays open: the next request is under the deadline again.
    mutating func answered(_ wsi: OpaquePointer) -> Client? {
        guard var client = clients[wsi] else { return nil }
        client.waiting = true
        client.round += 1
        clients[wsi] = client
        return client
    }

    /// Whether the socket still waits for the request it waited for as `client` (its deadline has passed: it is closed).
    func overdue(_ wsi: OpaquePointer, as client: Client) -> Bool {
        clients[wsi].map { $0.id == client.id && $0.waiting && $0.round == client.round } ?? false
    }

    mutating func closed(_ wsi: OpaquePointer) {
        guard let client = clients.removeValue(forKey: wsi) else { return }
        open[client.peer, default: 1] -= 1
        if open[client.peer] == 0 { open[client.peer] = nil }
    }
}
