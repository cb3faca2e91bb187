import CLibWebSockets
import Platform

/// libwebsockets' own log lines (errors), handed to whoever owns the process's log instead of written
/// to stderr by libwebsockets: under `--log-format json` every line stays one JSON object.
public enum LibWebSocketsLog {
    /// A line libwebsockets wrote, without its trailing newline, and whether it was an error (else a warning).
    public typealias Handler = @Sendable (_ line: String, _ isError: Bool) -> Void

    private static let handler = Locked<Handler?>(nil)

    /// Routes libwebsockets' lines to `handler`; nil writes them to stderr as they are.
    public static func route(to newHandler: Handler?) {
        install()
        handler.withLock { $0 = newHandler }
    }

    /// Sets the log level and the emitter once per process (libwebsockets keeps one of each).
    static func install() { _ = installed }

    private static let installed: Bool = {
        lws_set_log_level(LLL_ERR, { level, line in
            guard let line else { return }
            LibWebSocketsLog.emit(level: level, line: String(cString: line))
        })
        return true
    }()

    static func emit(level: Int32, line raw: String) {
        emit(level: level, line: raw, to: handler.withLock { $0 })
    }

    /// A line to `target` (nil: stderr), without its line ends; an empty line is dropped. Tests pass their own target:
    /// the process-wide route is any running daemon's.
    static func emit(level: Int32, line raw: String, to target: Handler?) {
        var line = Substring(raw)
        while line.last == "\n" || line.last == "\r" { line = line.dropLast() }
        guard !line.isEmpty else { return }
        let isError = level & LLL_ERR != 0
        if let target {
            target(String(line), isError)
        } else {
            StandardStream.error.write("libwebsockets: \(line)\n")
        }
    }
}
