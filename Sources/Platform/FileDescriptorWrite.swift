#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes all of `bytes` to `fd`, again after a signal interrupts (`EINTR`) and on after a short write; the `errno`
/// of a failure, nil once everything is written. The one write loop the standard streams and the state file share.
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if written == 0 { return EIO }
        offset += written
    }
    return nil
}
