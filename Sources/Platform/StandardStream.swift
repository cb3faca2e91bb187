#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// stdout and stderr written with one `write(2)` per call, unbuffered: a line stays whole in a pipe (up to PIPE_BUF)
/// and a reader sees it at once. What FileHandle.standardError gave, without Foundation's full module.
public enum StandardStream: Int32, Sendable {
    case output = 1, error = 2

    public func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(rawValue, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
