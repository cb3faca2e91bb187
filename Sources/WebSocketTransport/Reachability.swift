import Glibc

/// Why a server cannot be reached, told at once rather than after a timeout: the name does not resolve, nothing
/// listens at the port, or nothing answers. A TCP connection that opens is reachable: TLS and the path are the
/// WebSocket handshake's to report.
public enum Reachability {
    /// nil when a TCP connection to `host:port` opens within `timeout` seconds; else what went wrong, in words that
    /// say what to check.
    public static func problem(host: String, port: Int, timeout: Double = 3) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let first = found else {
            let why = resolved == EAI_NONAME || resolved == EAI_FAIL || resolved == EAI_AGAIN ? "the name does not resolve (\(String(cString: gai_strerror(resolved))))" : String(cString: gai_strerror(resolved))
            return "\(host): \(why) (check the URL; inside a container a .local name often does not resolve: use the address)"
        }
        defer { freeaddrinfo(found) }
        var refused = false
        var address: UnsafeMutablePointer<addrinfo>? = first
        while let candidate = address {
            switch attempt(candidate.pointee, timeout: timeout) {
            case 0: return nil
            case ECONNREFUSED: refused = true
            default: break
            }
            address = candidate.pointee.ai_next
        }
        if refused { return "\(host):\(port): connection refused: nothing listens there (is Home Assistant running, and is \(port) its port?)" }
        return "\(host):\(port): no answer within \(Int(timeout)) s (a firewall, or the wrong address?)"
    }

    /// 0 when connected, else the errno (ETIMEDOUT for no answer in time).
    private static func attempt(_ info: addrinfo, timeout: Double) -> Int32 {
        let fd = socket(info.ai_family, info.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        if connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return 0 }
        guard errno == EINPROGRESS else { return errno }
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { return ETIMEDOUT }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error
    }
}
