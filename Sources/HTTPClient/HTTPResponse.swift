/// What came back.
public struct HTTPResponse: Sendable, Equatable {
    public let status: Int
    /// Header names in lower case; values trimmed of HTTP's whitespace. Parsed from the lines as received at each
    /// read (read it once for several names): a push's answer is rarely asked for one (`retry-after` on a refusal),
    /// and it comes once a push.
    public var headers: [String: String] {
        switch storedHeaders {
        case .parsed(let headers): return headers
        case .lines(let lines): return Self.headers(fromLines: lines)
        }
    }
    public let body: [UInt8]
    /// Connections libcurl had to open for this request: 0 when a kept-alive one was reused.
    public let connectionsOpened: Int

    private enum StoredHeaders: Sendable {
        case parsed([String: String])
        /// Header lines as libcurl handed them over, each with its line end.
        case lines([UInt8])
    }
    private let storedHeaders: StoredHeaders

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], connectionsOpened: Int = 0) {
        self.status = status
        self.storedHeaders = .parsed(headers)
        self.body = body
        self.connectionsOpened = connectionsOpened
    }

    /// An answer whose header lines (`Name: value\r\n`, after the status line) are parsed only when read.
    init(status: Int, headerLines: [UInt8], body: [UInt8], connectionsOpened: Int) {
        self.status = status
        self.storedHeaders = .lines(headerLines)
        self.body = body
        self.connectionsOpened = connectionsOpened
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public static func == (a: HTTPResponse, b: HTTPResponse) -> Bool {
        a.status == b.status && a.body == b.body && a.connectionsOpened == b.connectionsOpened && a.headers == b.headers
    }

    /// Lines split at their ends; a line without a colon (the blank one closing the block) names nothing. Names are
    /// lowercased in ASCII (a header name is a token: ASCII only); a repeated name keeps its last value.
    static func headers(fromLines lines: [UInt8]) -> [String: String] {
        var headers: [String: String] = [:]
        lines.withUnsafeBufferPointer { bytes in
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
                defer { lineStart = lineEnd + 1 }
                guard let colon = bytes[lineStart..<lineEnd].firstIndex(of: UInt8(ascii: ":")) else { continue }
                let name = String(unsafeUninitializedCapacity: colon - lineStart) { buffer in
                    for i in lineStart..<colon {
                        let byte = bytes[i]
                        buffer[i - lineStart] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                    }
                    return colon - lineStart
                }
                var start = colon + 1, end = lineEnd
                while start < end, isSpace(bytes[start]) { start += 1 }
                while end > start, isSpace(bytes[end - 1]) { end -= 1 }
                headers[name] = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
        }
        return headers
    }
}
