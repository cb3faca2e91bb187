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
        // A stream nobody reads any more (a closed pipe) loses the text: there is nowhere to say so.
        text.withUTF8 { _ = writeAll(rawValue, UnsafeRawBufferPointer($0)) }
    }

    /// Bytes as they are (a log line built as bytes).
    public func write(bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = writeAll(rawValue, $0) }
    }
}
