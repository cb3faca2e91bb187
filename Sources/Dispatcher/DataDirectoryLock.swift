import FoundationEssentials
import Glibc
import Platform

/// The data directory held by one daemon at a time: two on one directory would both send starts for the same
/// activities and overwrite each other's state. An exclusive `flock` on `livebridge.lock`, released by the kernel
/// when the process ends however it ends, so a crash never leaves a stale lock.
public final class DataDirectoryLock: Sendable {
    public let path: String
    private let descriptor: Int32

    public struct HeldError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public init(directory: String) throws {
        path = directory + "/livebridge.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw HeldError(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.holder(fd)
            close(fd)
            throw HeldError(description: "another LiveBridge\(holder.map { " (pid \($0))" } ?? "") is running with the data directory \(directory); "
                + "stop it, or give this one its own --data-dir")
        }
        // The holder's pid, for the message a second daemon prints.
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    deinit { close(descriptor) }

    private static func holder(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 31, 0) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self).trimmingWhitespace()
        return Int32(text) != nil ? text : nil
    }
}
