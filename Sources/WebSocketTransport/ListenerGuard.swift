/// How a listener keeps idle, slow or numerous sockets from starving the requests that matter (a watchdog's
/// `/healthz`): at most `perClient` sockets from one address, a whole request within `deadline` of connecting (or of
/// the last answer), and the last `reserve` of its sockets for `reservedPaths` only.
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

    /// A new socket from `peer`: false when that address has `perClient` open already (it is closed at once).
    mutating func admit(socket: Int32, peer: String) -> Bool {
        let pending = admitted.values.reduce(0) { $0 + ($1 == peer ? 1 : 0) }
        guard open[peer, default: 0] + pending < limits.perClient else { return false }
        admitted[socket] = peer
        return true
    }

    /// The connection of an admitted socket; nil when it is known already or was never admitted.
    mutating func connected(_ wsi: OpaquePointer, socket: Int32) -> Client? {
        guard clients[wsi] == nil, let peer = admitted.removeValue(forKey: socket) else { return nil }
        nextID += 1
        let client = Client(id: nextID, peer: peer, reserved: clients.count >= capacity - limits.reserve)
        clients[wsi] = client
        open[peer, default: 0] += 1
        return client
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
