import Foundation
import HTTPClient
import Platform
import Testing

/// An answer far larger than any push service sends: read up to the cap, then the connection is dropped.
@Suite(.timeLimit(.minutes(1)))
struct ResponseSizeTests {
    /// A TCP server on 127.0.0.1 that answers one request with `head` and then streams zeros until the client hangs
    /// up or `limit` bytes are out; `sent` is how many body bytes went.
    final class FloodingServer: Sendable {
        let port: Int
        private let listener: Int32
        private let total = Locked(0)
        private let finished = DispatchSemaphore(value: 0)

        init(head: String, chunked: Bool, limit: Int = 64 << 20) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.listener = listener
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
            }
            guard bound, listen(listener, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
            port = Int(UInt16(bigEndian: address.sin_port))
            let (fd, total, finished) = (listener, total, finished)
            Thread.detachNewThread {
                defer { finished.signal() }
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                defer { close(client) }
                var request: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
                while String(decoding: request, as: UTF8.self).range(of: "\r\n\r\n") == nil {
                    let n = recv(client, &buffer, buffer.count, 0)
                    guard n > 0 else { return }
                    request += buffer[0..<n]
                }
                guard Self.sendAll(client, Array(head.utf8)) else { return }
                let piece = [UInt8](repeating: 0x30, count: 64 << 10)
                let frame = chunked ? Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10] : piece
                while total.withLock({ $0 }) < limit, Self.sendAll(client, frame) { total.withLock { $0 += piece.count } }
            }
        }

        deinit { close(listener) }

        private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }

        /// Body bytes sent before the client hung up (or the limit), once the server is done; -1 if it is not done
        /// within 30 s (a client that kept the connection open and stopped reading: the server's send blocks).
        func sent() -> Int {
            guard finished.wait(timeout: .now() + 30) == .success else { return -1 }
            return total.withLock { $0 }
        }
    }

    @Test(arguments: Driving.allCases) func aStreamedHugeBodyIsCutAtTheCapAndTheConnectionDropped(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try FloodingServer(head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", chunked: true)
            do throws(HTTPTransportError) {
                let response = try await host.client().send(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(server.port)/notify", body: Array("{}".utf8)))
                Issue.record("a \(response.body.count)-byte answer was read")
            } catch {
                #expect(error.description.contains("body is over 262144 bytes; connection dropped"), "\(error)")
            }
            // The server got a reset long before its 64 MiB (socket buffers hold a few MiB at most).
            let sent = server.sent()
            #expect((0..<16 << 20).contains(sent), "\(sent) bytes went before the client hung up (-1: it never did)")
        }
    }

    @Test(arguments: Driving.allCases) func anAnnouncedHugeBodyFailsBeforeItIsRead(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try FloodingServer(head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1500000000\r\n\r\n", chunked: false)
            do throws(HTTPTransportError) {
                _ = try await host.client().send(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(server.port)/notify", body: Array("{}".utf8)))
                Issue.record("a 1.5 GB answer was read")
            } catch {
                #expect(error.description.contains("over 262144 bytes"), "\(error)")
            }
            let sent = server.sent()
            #expect((0..<16 << 20).contains(sent), "\(sent) bytes went before the client hung up (-1: it never did)")
        }
    }

    @Test(arguments: Driving.allCases) func anAnswerUnderTheCapIsReadWhole(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try FloodingServer(head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 131072\r\n\r\n", chunked: false,
                                            limit: 128 << 10)
            let response = try await host.client().send(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(server.port)/notify", body: Array("{}".utf8)))
            #expect(response.status == 200)
            #expect(response.body.count == 128 << 10)
        }
    }
}
