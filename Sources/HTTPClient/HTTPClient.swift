import CCurl
import Foundation
import Synchronization

/// HTTP over libcurl for one backend: its connections reused, connect and total timeouts, TLS verification on,
/// proxies from the environment (libcurl reads http_proxy/https_proxy/no_proxy), `User-Agent: livebridge/<version>`.
///
/// Each request runs on a thread of its own with an easy handle taken from a small pool; a handle is never used by
/// two requests at once. Tokens travel only in headers and never reach a log or an error.
public final class HTTPClient: Sendable {
    public struct Options: Sendable {
        public var connectTimeout: Duration = .seconds(5)
        public var totalTimeout: Duration = .seconds(15)
        public var userAgent = "livebridge/0.1"
        /// A PEM bundle to trust instead of the system store (tests with their own CA).
        public var caFile: String?
        public init() {}
    }

    public let options: Options
    private let pool = Mutex<[HandleBox]>([])

    public init(options: Options = Options()) {
        Self.initialise
        self.options = options
    }

    deinit {
        for box in pool.withLock({ $0 }) { curl_easy_cleanup(box.handle) }
    }

    private static let initialise: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// Sends and waits for the answer, off the caller's thread.
    public func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        let result: Result<HTTPResponse, HTTPTransportError> = await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in continuation.resume(returning: perform(request)) }
        }
        return try result.get()
    }

    private final class HandleBox: @unchecked Sendable {
        let handle: UnsafeMutableRawPointer
        init(_ handle: UnsafeMutableRawPointer) { self.handle = handle }
    }

    /// Collects the body and the headers of one transfer.
    fileprivate final class Sink {
        var body: [UInt8] = []
        var headers: [String: String] = [:]
    }

    private func perform(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPTransportError> {
        let box = pool.withLock { $0.popLast() } ?? HandleBox(curl_easy_init())
        let handle = box.handle
        defer {
            curl_easy_reset(handle)
            pool.withLock { if $0.count < 8 { $0.append(box) } else { curl_easy_cleanup(handle) } }
        }
        let sink = Sink()
        let sinkPointer = Unmanaged.passRetained(sink)
        defer { sinkPointer.release() }

        _ = ccurl_setopt_string(handle, CURLOPT_URL, request.url)
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(options.connectTimeout))
        _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(options.totalTimeout))
        _ = ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent)
        if let caFile = options.caFile { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        if request.method == "HEAD" { _ = ccurl_setopt_long(handle, CURLOPT_NOBODY, 1) }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            _ = ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, request.body.count)
            request.body.withUnsafeBufferPointer { buffer in
                _ = ccurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
            }
        }
        var headerList: UnsafeMutablePointer<curl_slist>?
        for header in request.headers { headerList = curl_slist_append(headerList, "\(header.name): \(header.value)") }
        headerList = curl_slist_append(headerList, "Expect:")
        defer { curl_slist_free_all(headerList) }
        _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
        _ = ccurl_setopt_write_function(handle, writeCallback)
        _ = ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer.toOpaque())
        _ = ccurl_setopt_header_function(handle, headerCallback)
        _ = ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer.toOpaque())

        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            return .failure(HTTPTransportError(code: Int(code.rawValue), message: message, isTimeout: code == CURLE_OPERATION_TIMEDOUT))
        }
        var status = 0
        var opened = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        _ = ccurl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &opened)
        return .success(HTTPResponse(status: status, headers: sink.headers, body: sink.body, connectionsOpened: opened))
    }

    static func milliseconds(_ d: Duration) -> Int {
        Int(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000)
    }

    fileprivate static func sink(_ pointer: UnsafeMutableRawPointer?) -> Sink? {
        pointer.map { Unmanaged<Sink>.fromOpaque($0).takeUnretainedValue() }
    }

    fileprivate static func append(body data: UnsafeMutablePointer<CChar>?, _ count: Int, to pointer: UnsafeMutableRawPointer?) {
        guard let data, let sink = sink(pointer) else { return }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
    }

    fileprivate static func append(header data: UnsafeMutablePointer<CChar>?, _ count: Int, to pointer: UnsafeMutableRawPointer?) {
        guard let data, let sink = sink(pointer) else { return }
        let line = data.withMemoryRebound(to: UInt8.self, capacity: count) { String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self) }
        if line.hasPrefix("HTTP/") { sink.headers = [:]; return }  // a new response (after 100 Continue or a proxy's)
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        sink.headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

private func writeCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    HTTPClient.append(body: data, size * count, to: user)
    return size * count
}

private func headerCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    HTTPClient.append(header: data, size * count, to: user)
    return size * count
}
