/// The request never got an HTTP answer: refused, reset, timed out, TLS failed. `code` is libcurl's.
public struct HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let message: String
    public let isTimeout: Bool
    public var description: String { "\(message) (curl \(code))" }
}
