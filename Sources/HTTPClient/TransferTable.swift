import CCurl
import Platform

/// libcurl's multi handle and what runs on it: transfers started, queued behind their host's running ones, answered
/// and ended. Whoever drives it (`TransferLoop` on a thread of its own, `HostedTransfers` on an event loop's) calls
/// it from one thread only; completions are called there.
final class TransferTable {
    let options: HTTPClient.Options
    let multi: UnsafeMutableRawPointer
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// Running transfers per host, and those waiting for one of them to end.
    private var running: [Substring: Int] = [:]
    private var waiting: [Substring: [Transfer]] = [:]

    /// libcurl's global set-up (OpenSSL's with it), once. A driver calls it when it is made, not at its first transfer:
    /// that runs during the daemon's start-up, whose code pages are let go of after the first snapshot
    /// (`CodePages`); at the first push it left 1.6 MiB of libcrypto's code resident for good.
    static let initialise: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// The ends of a transfer that libcurl did not finish (`CURLE_ABORTED_BY_CALLBACK`): said once, for both drivers.
    static let cancelled = aborted("the request was cancelled")
    static let shutDown = aborted("the HTTP client was shut down")
    static func aborted(_ why: String) -> HTTPTransportError {
        HTTPTransportError(code: Int(CURLE_ABORTED_BY_CALLBACK.rawValue), message: why, isTimeout: false)
    }

    /// Idle connections kept open for reuse, over every host of this client (a backend has one or two).
    static let maximumIdleConnections = 64

    /// Transfers running at once to one host (scheme, host and port); more wait their turn here, in order, and start as
    /// one ends. Every activity's lane may push in the same instant (two hundred at the top of a second under
    /// `min_interval`): without a bound each push opened a connection of its own (156 for 1,001 pushes, each with its
    /// buffers and, over https, its TLS session), for a service that answers in milliseconds and limits requests per
    /// minute anyway. (libcurl's `CURLMOPT_MAX_HOST_CONNECTIONS` was tried first; a daemon test's push then did not
    /// arrive within 10 s once, not understood, so the queue is kept here where the tests see it.)
    static let maximumConnectionsPerHost = 8

    init(options: HTTPClient.Options) {
        Self.initialise
        self.options = options
        multi = curl_multi_init()
        // Kept-alive connections to reuse: libcurl's default cache follows the transfers running at the moment, so
        // a burst of pushes that all finished would open that many connections again next time.
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.maximumIdleConnections)
    }

    /// The end: every transfer not yet answered (`incoming`, running or waiting) fails with `error`, and the multi
    /// handle and every easy handle are freed. Nothing may use the table after.
    func close(failing error: HTTPTransportError, also incoming: [Transfer] = []) {
        let left = incoming + active.values + waiting.values.joined()
        for (handle, transfer) in active {
            curl_multi_remove_handle(multi, handle)
            curl_easy_cleanup(handle)
            curl_slist_free_all(transfer.headerList)
        }
        active = [:]
        waiting = [:]
        running = [:]
        for handle in idleHandles { curl_easy_cleanup(handle) }
        idleHandles = []
        curl_multi_cleanup(multi)
        for transfer in left { transfer.completion(.failure(error)) }
    }

    /// Starts a transfer, or queues it behind its host's running ones.
    func admit(_ transfer: Transfer) {
        let host = transfer.host
        if running[host, default: 0] < Self.maximumConnectionsPerHost {
            running[host, default: 0] += 1
            begin(transfer)
        } else {
            waiting[host, default: []].append(transfer)
        }
    }

    /// A transfer to `host` ended: the next one waiting for it starts.
    private func ended(on host: Substring) {
        if var queue = waiting[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[host] = queue.isEmpty ? nil : queue
            begin(next)
        } else if let count = running[host] {
            running[host] = count > 1 ? count - 1 : nil
        }
    }

    /// A cancelled transfer: taken out of its host's queue or off the multi handle (its connection closed) and failed.
    /// One that already finished was answered and is not in either.
    func abandon(_ transfer: Transfer) {
        let aborted = Self.cancelled
        if var queue = waiting[transfer.host], let index = queue.firstIndex(where: { $0 === transfer }) {
            queue.remove(at: index)
            waiting[transfer.host] = queue.isEmpty ? nil : queue
            transfer.completion(.failure(aborted))
            return
        }
        guard let handle = active.first(where: { $0.value === transfer })?.key else { return }
        curl_multi_remove_handle(multi, handle)
        active[handle] = nil
        curl_slist_free_all(transfer.headerList)
        transfer.headerList = nil
        // Removed mid-transfer, its connection is not reused; the handle is not either.
        curl_easy_cleanup(handle)
        ended(on: transfer.host)
        transfer.completion(.failure(aborted))
    }

    private func begin(_ transfer: Transfer) {
        guard let handle = idleHandles.popLast() ?? curl_easy_init() else {
            transfer.completion(.failure(HTTPTransportError(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "libcurl could not make a handle", isTimeout: false)))
            ended(on: transfer.host)
            return
        }
        configure(handle, for: transfer)
        active[handle] = transfer
        curl_multi_add_handle(multi, handle)
    }

    private func configure(_ handle: UnsafeMutableRawPointer, for transfer: Transfer) {
        let request = transfer.request
        _ = ccurl_setopt_string(handle, CURLOPT_URL, request.url)
        // HTTP and HTTPS only: a URL from a file or a command line cannot make libcurl read file:// or speak dict://.
        _ = ccurl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = ccurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        _ = ccurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, HTTPClient.milliseconds(options.connectTimeout))
        _ = ccurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, HTTPClient.milliseconds(options.totalTimeout))
        _ = ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = ccurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        _ = ccurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent)
        // An announced Content-Length past the cap fails before any of the body is read; the write callback stops the rest.
        _ = ccurl_setopt_long(handle, CURLOPT_MAXFILESIZE, options.maximumResponseBody)
        // The given CA file, else the system's bundle wherever this distribution keeps it (not where libcurl was built to look).
        if let caFile = options.caFile ?? SystemCertificates.bundle { _ = ccurl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        if request.method == "HEAD" { _ = ccurl_setopt_long(handle, CURLOPT_NOBODY, 1) }
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            _ = ccurl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, request.body.count)
            request.body.withUnsafeBufferPointer { buffer in
                _ = ccurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
            }
        }
        for header in request.headers { transfer.headerList = curl_slist_append(transfer.headerList, "\(header.name): \(header.value)") }
        transfer.headerList = curl_slist_append(transfer.headerList, "Expect:")
        _ = ccurl_setopt_slist(handle, CURLOPT_HTTPHEADER, transfer.headerList)
        let pointer = Unmanaged.passUnretained(transfer).toOpaque()
        _ = ccurl_setopt_write_function(handle, writeCallback)
        _ = ccurl_setopt_pointer(handle, CURLOPT_WRITEDATA, pointer)
        _ = ccurl_setopt_header_function(handle, headerCallback)
        _ = ccurl_setopt_pointer(handle, CURLOPT_HEADERDATA, pointer)
    }

    /// Answers the transfers libcurl has finished.
    func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result  // read before removing the handle: that frees the message
            curl_multi_remove_handle(multi, handle)
            guard let transfer = active.removeValue(forKey: handle) else { continue }
            let result = outcome(handle, code, transfer)
            curl_slist_free_all(transfer.headerList)
            transfer.headerList = nil
            curl_easy_reset(handle)
            if idleHandles.count < 16 { idleHandles.append(handle) } else { curl_easy_cleanup(handle) }
            ended(on: transfer.host)
            transfer.completion(result)
        }
    }

    private func outcome(_ handle: UnsafeMutableRawPointer, _ code: CURLcode, _ transfer: Transfer) -> Result<HTTPResponse, HTTPTransportError> {
        if let oversized = transfer.oversized ?? (code == CURLE_FILESIZE_EXCEEDED ? "body over \(transfer.maximumBody) bytes" : nil) {
            return .failure(HTTPTransportError(code: Int(code.rawValue), message: "the answer's \(oversized); connection dropped", isTimeout: false))
        }
        guard code == CURLE_OK else {
            let message = String(cString: curl_easy_strerror(code))
            return .failure(HTTPTransportError(code: Int(code.rawValue), message: message, isTimeout: code == CURLE_OPERATION_TIMEDOUT))
        }
        var status = 0
        var opened = 0
        _ = ccurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        _ = ccurl_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &opened)
        return .success(HTTPResponse(status: status, headerLines: transfer.headerLines, body: transfer.body, connectionsOpened: opened))
    }

    fileprivate static func transfer(_ pointer: UnsafeMutableRawPointer?) -> Transfer? {
        pointer.map { Unmanaged<Transfer>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Takes a piece of the body; false past the cap (libcurl then aborts the transfer and closes its connection).
    fileprivate static func append(body data: UnsafeMutablePointer<CChar>?, _ count: Int, to pointer: UnsafeMutableRawPointer?) -> Bool {
        guard let data, let transfer = transfer(pointer) else { return true }
        guard transfer.body.count + count <= transfer.maximumBody else {
            transfer.oversized = "body is over \(transfer.maximumBody) bytes"
            transfer.body = []
            return false
        }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
        return true
    }

    /// Takes a header line; false past the cap on all of them.
    fileprivate static func append(header data: UnsafeMutablePointer<CChar>?, _ count: Int, to pointer: UnsafeMutableRawPointer?) -> Bool {
        guard let data, let transfer = transfer(pointer) else { return true }
        transfer.headerBytes += count
        guard transfer.headerBytes <= transfer.maximumHeaderBytes else {
            transfer.oversized = "headers are over \(transfer.maximumHeaderBytes) bytes"
            transfer.headerLines = []
            return false
        }
        // Kept as bytes, parsed only if someone reads them: a push's answer rarely is.
        let line = UnsafeRawBufferPointer(start: data, count: count)
        if line.starts(with: "HTTP/".utf8) { transfer.headerLines.removeAll(keepingCapacity: true); return true }  // a new response (after 100 Continue or a proxy's)
        transfer.headerLines.append(contentsOf: line)
        return true
    }
}

private func writeCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    TransferTable.append(body: data, size * count, to: user) ? size * count : 0
}

private func headerCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    TransferTable.append(header: data, size * count, to: user) ? size * count : 0
}
