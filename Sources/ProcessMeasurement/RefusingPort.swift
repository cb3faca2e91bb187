import FoundationEssentials
import Glibc

/// A port on 127.0.0.1 held bound and not listening while this lives: a connection to it is refused at once, and no
/// listener (another test's, a daemon's on port 0) and no connection's own end can be given it meanwhile (a port found
/// free and let go could be taken before it is used: listeners take port 0 and say which port they got).
public final class RefusingPort: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        precondition(fd >= 0 && bound == 0 && address.sin_port != 0, "no loopback port could be bound")
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}
