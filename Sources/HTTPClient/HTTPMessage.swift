/// An HTTP request as the backends make them.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    /// Header lines in order; values may hold tokens, so a request is never logged whole (see `redacted`).
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.url == b.url && a.body == b.body
            && a.headers.map { "\($0.name): \($0.value)" } == b.headers.map { "\($0.name): \($0.value)" }
    }

    /// The headers for display: Authorization values masked.
    public var redactedHeaders: [String] {
        headers.map { header in
            guard header.name.lowercased() == "authorization" else { return "\(header.name): \(header.value)" }
            let scheme = header.value.split(separator: " ").first.map(String.init) ?? ""
            return "\(header.name): \(scheme) ****"
        }
    }
}

/// What came back.
public struct HTTPResponse: Sendable, Equatable {
    public let status: Int
    /// Header names in lower case.
    public let headers: [String: String]
    public let body: [UInt8]
    /// Connections libcurl had to open for this request: 0 when a kept-alive one was reused.
    public let connectionsOpened: Int

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], connectionsOpened: Int = 0) {
        self.status = status
        self.headers = headers
        self.body = body
        self.connectionsOpened = connectionsOpened
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// The request never got an HTTP answer: refused, reset, timed out, TLS failed. `code` is libcurl's.
public struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let message: String
    public let isTimeout: Bool
    public var description: String { "\(message) (curl \(code))" }
}
