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
