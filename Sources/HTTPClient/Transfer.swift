import CCurl
import Platform

/// One request on its way: what to send, where the answer goes. Handed over once, then touched only by the thread
/// that drives its `TransferTable`.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let completion: @Sendable (Result<HTTPResponse, HTTPTransportError>) -> Void
    var body: [UInt8] = []
    /// The answer's header lines as received (after its status line), parsed only if read (`HTTPResponse.headers`).
    var headerLines: [UInt8] = []
    /// Bytes of header lines taken in, against `HTTPClient.Options.maximumHeaderBytes`.
    var headerBytes = 0
    /// The answer went past a cap: the transfer was aborted and its connection dropped.
    var oversized: String?
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// Its caller stopped waiting before the driver took it in (a cancel on the loop's thread can overtake a start
    /// handed over from another): it is failed when it arrives instead of sent.
    var abandoned = false
    let maximumBody: Int
    let maximumHeaderBytes: Int
    /// `scheme://host:port` of its URL: what the per-host bound counts by.
    let host: Substring

    /// `scheme://authority` of a URL (the whole text when it has no `://`).
    static func origin(of url: String) -> Substring {
        let bytes = Array(url.utf8)
        var i = 0
        while i + 2 < bytes.count, !(bytes[i] == 0x3A && bytes[i + 1] == 0x2F && bytes[i + 2] == 0x2F) { i += 1 }
        guard i + 2 < bytes.count else { return url[...] }
        var end = i + 3
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        return Substring(url.utf8.prefix(end))
    }

    init(request: HTTPRequest, limits: HTTPClient.Options, completion: @escaping @Sendable (Result<HTTPResponse, HTTPTransportError>) -> Void) {
        self.request = request
        self.completion = completion
        maximumBody = limits.maximumResponseBody
        maximumHeaderBytes = limits.maximumHeaderBytes
        host = Self.origin(of: request.url)
    }
}
