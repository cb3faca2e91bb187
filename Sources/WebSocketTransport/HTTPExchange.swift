import CLibWebSockets

/// A plain HTTP request to a listener (the fake push backends, later the status page).
public struct HTTPServerRequest: Sendable, Equatable {
    public let method: String
    /// The path with its query.
    public let path: String
    /// The headers the tests and backends look at, by lower-case name.
    public let headers: [String: String]
    public let body: [UInt8]

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// The answer to send back.
public struct HTTPServerResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, contentType: String = "application/json", headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    public init(status: Int, json: String, headers: [String: String] = [:]) {
        self.init(status: status, contentType: "application/json", headers: headers, body: Array(json.utf8))
    }
}

/// Answers a request by calling `respond` once, at once or later, from any thread.
public typealias HTTPHandler = @Sendable (HTTPServerRequest, _ respond: @escaping @Sendable (HTTPServerResponse) -> Void) -> Void

/// One HTTP request being served on the loop thread.
final class HTTPExchange {
    let method: String
    let path: String
    let headers: [String: String]
    var body: [UInt8] = []
    var response: HTTPServerResponse?
    var headersSent = false
    var isFinished = false
    /// Refused before its body was read: the connection closes after the answer.
    var closeAfterResponse = false
    /// Which request this is, among all the loop has had: a late answer finds its own exchange by it, not by the
    /// connection's address, which a new connection can be given once this one is gone.
    var serial = 0

    init(method: String, path: String, headers: [String: String]) {
        self.method = method
        self.path = path
        self.headers = headers
    }

    var request: HTTPServerRequest { HTTPServerRequest(method: method, path: path, headers: headers, body: body) }

    static let methods: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_PATCH_URI, "PATCH"),
        (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"), (WSI_TOKEN_HEAD_URI, "HEAD"),
    ]

    static let headerTokens: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_HTTP_AUTHORIZATION, "authorization"), (WSI_TOKEN_HTTP_CONTENT_TYPE, "content-type"),
        (WSI_TOKEN_HTTP_USER_AGENT, "user-agent"), (WSI_TOKEN_HTTP_CONTENT_LENGTH, "content-length"),
        (WSI_TOKEN_HTTP_TRANSFER_ENCODING, "transfer-encoding"),
    ]

    /// Reads method, path and headers of the request on `wsi`.
    static func begin(wsi: OpaquePointer, uri: String) -> HTTPExchange {
        var method = "GET"
        for (token, name) in methods where lws_hdr_total_length(wsi, token) > 0 {
            method = name
            break
        }
        var headers: [String: String] = [:]
        for (token, name) in headerTokens {
            let length = Int(lws_hdr_total_length(wsi, token))
            guard length > 0 else { continue }
            var buffer = [CChar](repeating: 0, count: length + 1)
            if lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 {
                headers[name] = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        var path = uri
        let queryLength = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        if queryLength > 0 {
            var buffer = [CChar](repeating: 0, count: queryLength + 1)
            if lws_hdr_copy(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS) >= 0 {
                path += "?" + String(decoding: buffer.prefix(queryLength).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        return HTTPExchange(method: method, path: path, headers: headers)
    }

    /// Writes the status line and headers, then (next time) the body. Returns false to close the connection.
    func writeable(wsi: OpaquePointer) -> Bool {
        guard let response else { return true }
        let pre = Int(clws_pre())
        if !headersSent {
            var buffer = [UInt8](repeating: 0, count: pre + 2048)
            let ok = buffer.withUnsafeMutableBufferPointer { raw -> Bool in
                let start = raw.baseAddress! + pre
                let end = raw.baseAddress! + raw.count - 1
                var p: UnsafeMutablePointer<UInt8>? = start
                if lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType, lws_filepos_t(response.body.count), &p, end) != 0 {
                    return false
                }
                for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
                    let header = Array((name.lowercased() + ":").utf8) + [0]
                    let bytes = Array(value.utf8)
                    if lws_add_http_header_by_name(wsi, header, bytes, Int32(bytes.count), &p, end) != 0 { return false }
                }
                return lws_finalize_write_http_header(wsi, start, &p, end) == 0
            }
            guard ok else { return false }
            headersSent = true
            // No body (a 204): the transaction is complete with the headers. A zero-length final write after them
            // had libwebsockets take the kept-alive connection's request again, endlessly.
            if response.body.isEmpty { return finish(wsi) }
            lws_callback_on_writable(wsi)
            return true
        }
        var buffer = [UInt8](repeating: 0, count: pre) + response.body
        let written = buffer.withUnsafeMutableBufferPointer { raw in
            lws_write(wsi, raw.baseAddress! + pre, response.body.count, LWS_WRITE_HTTP_FINAL)
        }
        guard written == response.body.count else { return false }
        return finish(wsi)
    }

    /// The response is out: the connection closes, or waits for its next request.
    private func finish(_ wsi: OpaquePointer) -> Bool {
        isFinished = true
        if closeAfterResponse { return false }
        return lws_http_transaction_completed(wsi) == 0
    }
}
