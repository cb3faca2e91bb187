#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a listener could not be opened, in words: libwebsockets only says its context failed, so the bind is tried
/// again here, alone, to learn the reason (`EADDRINUSE` and the rest).
enum ListenProbe {
    static func problem(host: String, port: Int) -> String {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            return "cannot listen on \(address): no such address or interface here"
        }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard socket >= 0 else { return "cannot listen on \(address): \(String(cString: strerror(errno)))" }
        defer { close(socket) }
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(socket, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            switch errno {
            case EADDRINUSE: return "cannot listen on \(address): already in use (another program, or another LiveBridge, has it)"
            case EACCES: return "cannot listen on \(address): permission denied (ports below 1024 need privileges)"
            case EADDRNOTAVAIL: return "cannot listen on \(address): that address is not one of this machine's"
            case let code: return "cannot listen on \(address): \(String(cString: strerror(code)))"
            }
        }
        // The address binds alone: libwebsockets did not take it as given (it reads a name as an interface's).
        return "cannot listen on \(address): give a numeric address (127.0.0.1, 0.0.0.0) or an interface's name (lo, eth0), not a host name"
    }
}
