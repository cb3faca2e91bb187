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
