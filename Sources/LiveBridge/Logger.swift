import FoundationEssentials
public import HomeAssistant
import Platform
import Synchronization
import WebSocketTransport

/// Lines to stderr in logfmt (`time=… level=info msg="…" key=value`) or JSON, cheap when the level is off.
/// Callers pass no secrets: tokens are never handed to the logger. Messages and values carry text from outside, so
/// each is cut at `OutsideText.limit` and escaped: a line is one line, whatever a service or Home Assistant sent.
public final class Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var name: String { ["debug", "info", "warning", "error"][rawValue] }
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.name == name.lowercased() || (name.lowercased() == "warn" && $0 == .warning) }) else { return nil }
            self = level
        }
    }

    public enum Format: String, Sendable { case text, json }

    public let level: Level
    public let format: Format
    /// Where lines go; nil: standard error, written from the line's bytes (no String made of a line a push).
    private let write: (@Sendable (String) -> Void)?

    public init(level: Level = .info, format: Format = .text, write: (@Sendable (String) -> Void)? = nil) {
        self.level = level
        self.format = format
        self.write = write
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) {
        guard level >= self.level else { return }
        let now = Date().timeIntervalSince1970
        let message = OutsideText.bounded(message())
        switch format {
        case .text:
            // Built as bytes: a line a push, and most fields need no quotes.
            var line: [UInt8] = []
            line.reserveCapacity(192)
            line.append(contentsOf: "time=".utf8)
            Timestamp.appendLogTime(now, to: &line)
            line.append(contentsOf: " level=".utf8)
            line.append(contentsOf: level.name.utf8)
            line.append(contentsOf: " msg=".utf8)
            Self.appendQuoted(message, to: &line)
            for (key, value) in fields {
                line.append(UInt8(ascii: " "))
                Self.appendQuoted(key, to: &line)
                line.append(UInt8(ascii: "="))
                Self.appendQuoted(OutsideText.bounded(value), to: &line)
            }
            if let write {
                write(String(decoding: line, as: UTF8.self))
            } else {
                line.append(0x0A)
                StandardStream.error.write(bytes: line)
            }
        case .json:
            let time = Timestamp.logTime(now)
            var object = "{\"time\":\"\(time)\",\"level\":\"\(level.name)\",\"msg\":\(Self.json(message))"
            for (key, value) in fields { object += ",\(Self.json(key)):\(Self.json(OutsideText.bounded(value)))" }
            (write ?? Self.standardError)(object + "}")
        }
    }

    public func info(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, message(), fields) }
    public func warning(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, message(), fields) }
    public func error(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, message(), fields) }
    public func debug(_ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]) { log(.debug, message(), fields) }

    /// Takes libwebsockets' own lines (a failed TLS handshake, a socket it could not open) as this logger's, so
    /// `--log-format json` stays one JSON object per line. Process-wide: libwebsockets keeps one log hook.
    public func takeLibraryLogs() {
        LibWebSocketsLog.route(to: libraryLogHandler)
    }

    /// Secrets libwebsockets' lines are cleared of (the rules' tokens): LiveBridge hands the logger none, but a
    /// library's line is text LiveBridge did not write.
    private let librarySecrets = Locked<[AccessToken]>([])

    /// The tokens to mask in libwebsockets' lines from now on (the rules', again after a reload).
    public func maskInLibraryLines(_ tokens: [AccessToken]) {
        librarySecrets.withLock { $0 = tokens.filter { !$0.isEmpty } }
    }

    /// How a libwebsockets line becomes this logger's: an error or a warning named `libwebsockets`, the line as detail.
    var libraryLogHandler: LibWebSocketsLog.Handler {
        { [self] line, isError in
            let masked = AccessToken.masking(librarySecrets.withLock { $0 }, in: line)
            log(isError ? .error : .warning, "libwebsockets", ["detail": masked])
        }
    }

    /// A logfmt value onto `line`: bare when it is printable ASCII without space, `"`, `=` or `\\`; else quoted and
    /// escaped (`escaped`). Read as bytes where the value is stored: a line a push, a dozen values a line.
    static func appendQuoted(_ value: String, to line: inout [UInt8]) {
        var value = value
        let done = value.withUTF8 { bytes in
            if !needsQuotes(bytes) {
                line.append(contentsOf: bytes)
                return true
            }
            // ASCII (nearly every quoted value): escaped byte by byte, as `escaped` does it.
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return false }
            line.append(UInt8(ascii: "\""))
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\\"), UInt8(ascii: "\""):
                    line.append(UInt8(ascii: "\\"))
                    line.append(byte)
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    line.append(UInt8(ascii: "\\"))
                    line.append(byte == UInt8(ascii: "\n") ? UInt8(ascii: "n") : byte == UInt8(ascii: "\r") ? UInt8(ascii: "r") : UInt8(ascii: "t"))
                case 0..<0x20, 0x7F: line.append(contentsOf: OutsideText.escape(Unicode.Scalar(byte)).utf8)
                default: line.append(byte)
                }
            }
            line.append(UInt8(ascii: "\""))
            return true
        }
        guard !done else { return }
        line.append(UInt8(ascii: "\""))
        line.append(contentsOf: escaped(value).utf8)
        line.append(UInt8(ascii: "\""))
    }

    /// Empty, or holding a byte that is not printable ASCII, a space, `"`, `=` or `\\`. By bytes: any byte of a scalar
    /// beyond ASCII is beyond 0x7E too.
    private static func needsQuotes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if bytes.isEmpty { return true }
        for byte in bytes where byte < 0x21 || byte > 0x7E || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "\\") {
            return true
        }
        return false
    }

    /// Each line to stderr in one write: lines from several threads never interleave.
    public static let standardError: @Sendable (String) -> Void = { StandardStream.error.write($0 + "\n") }

    /// A JSON string, escaped as in logfmt (valid JSON escapes all).
    static func json(_ value: String) -> String { "\"" + escaped(value) + "\"" }

    /// `\\`, `"`, newlines and tabs escaped, and every unsafe scalar (`OutsideText.isUnsafe`: controls, line separators,
    /// bidirectional controls) as `\\u` and four hex digits: the value stays on its line and shows what it holds.
    static func escaped(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where OutsideText.isUnsafe(scalar): out += OutsideText.escape(scalar)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
