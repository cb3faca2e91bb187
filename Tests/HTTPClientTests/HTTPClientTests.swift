import Platform
import Foundation
@testable import HTTPClient
import Synchronization
import Testing
import WebSocketTransport

/// libcurl against a libwebsockets HTTP server on 127.0.0.1: real requests, both ends in the test.
@Suite(.timeLimit(.minutes(1)))
struct HTTPClientTests {
    final class Recorder: Sendable {
        let requests = Locked<[HTTPServerRequest]>([])
    }

    /// A server that records requests and answers with `answer`.
    final class Server: Sendable {
        let loop: WebSocketEventLoop
        let recorder = Recorder()
        var base: String { "http://127.0.0.1:\(loop.listenPort)" }

        init(answer: @escaping @Sendable (HTTPServerRequest, @escaping @Sendable (HTTPServerResponse) -> Void) -> Void) throws {
            var options = WebSocketEventLoop.Options()
            options.listen = ("127.0.0.1", 0)
            loop = try WebSocketEventLoop(options: options)
            let recorder = self.recorder
            loop.onHTTPRequest = { request, respond in
                recorder.requests.withLock { $0.append(request) }
                answer(request, respond)
            }
            loop.start()
        }

        deinit { loop.shutdown() }
    }

    @Test(arguments: Driving.allCases) func aPatchCarriesItsBodyAndHeadersAndGetsTheAnswer(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try Server { request, respond in
                respond(HTTPServerResponse(status: 200, json: #"{"stored":true}"#, headers: ["x-echo": request.method]))
            }
            let client = host.client()
            let response = try await client.send(HTTPRequest(method: "PATCH", url: server.base + "/activity/washer?x=1",
                headers: [("Authorization", "Token secret-aivi"), ("Content-Type", "application/json")], body: Array(#"{"state":"ONGOING"}"#.utf8)))
            #expect(response.status == 200)
            #expect(response.bodyText == #"{"stored":true}"#)
            #expect(response.headers["x-echo"] == "PATCH")
            let seen = try #require(server.recorder.requests.withLock { $0.first })
            #expect(seen.method == "PATCH")
            #expect(seen.path == "/activity/washer?x=1")
            #expect(seen.headers["authorization"] == "Token secret-aivi")
            #expect(seen.headers["content-type"] == "application/json")
            #expect(seen.headers["user-agent"] == "livebridge/0.1.0")
            #expect(seen.bodyText == #"{"state":"ONGOING"}"#)
        }
    }

    /// Each request wakes the transfer loop out of its poll. The loop here sleeps ten minutes when idle, so a wake-up
    /// lost (a burst's flag left set) hangs the next request and the suite's time limit fails it; nothing is timed.
    @Test(arguments: Driving.allCases) func requestsOneAfterAnotherEachWakeTheLoop(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try Server { _, respond in respond(HTTPServerResponse(status: 200, json: "{}")) }
            var options = HTTPClient.Options()
            options.idlePoll = .seconds(600)
            let client = host.client(options)
            for _ in 0..<10 {
                let response = try await client.send(HTTPRequest(method: "POST", url: server.base + "/push", body: Array("{}".utf8)))
                #expect(response.status == 200)
            }
        }
    }

    @Test(arguments: Driving.allCases) func errorStatusesAndRetryAfterComeBackAsTheyAre(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try Server { _, respond in
                respond(HTTPServerResponse(status: 429, json: #"{"error":"RATE_LIMITED"}"#, headers: ["Retry-After": "30"]))
            }
            let response = try await host.client().send(HTTPRequest(method: "POST", url: server.base + "/notify", body: Array("{}".utf8)))
            #expect(response.status == 429)
            #expect(response.headers["retry-after"] == "30")
            #expect(response.bodyText == #"{"error":"RATE_LIMITED"}"#)
        }
    }

    @Test(arguments: Driving.allCases) func aSlowServerIsATimeout(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try Server { _, respond in
                DispatchQueue.global().asyncAfter(deadline: .now() + 2) { respond(HTTPServerResponse(status: 200)) }
            }
            var options = HTTPClient.Options()
            options.totalTimeout = .milliseconds(200)
            do throws(HTTPTransportError) {
                _ = try await host.client(options).send(HTTPRequest(method: "POST", url: server.base + "/notify", body: [1]))
                Issue.record("a 2 s answer beat a 200 ms timeout")
            } catch {
                #expect(error.isTimeout)
            }
        }
    }

    /// libcurl's timeout moves later: the first of two requests (each with its 1 s total timeout) is answered, and the
    /// next timeout is the second's, later; the second still ends at its own timeout, not the first's. (Whether the
    /// timer set for the first is set again when it goes off early is not isolated here: libcurl acts often enough
    /// that another `act` sets it too.)
    @Test(arguments: Driving.allCases) func aRequestsTimeoutEndsItWhileAnotherIsAnswered(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try Server { request, respond in
                let delay: Double = request.path.hasSuffix("/soon") ? 0.3 : 3
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { respond(HTTPServerResponse(status: 200)) }
            }
            var options = HTTPClient.Options()
            options.totalTimeout = .seconds(1)
            let client = host.client(options)
            async let first = client.send(HTTPRequest(method: "POST", url: server.base + "/soon", body: [1]))
            try await Task.sleep(for: .milliseconds(200))
            let started = ContinuousClock.now
            do throws(HTTPTransportError) {
                _ = try await client.send(HTTPRequest(method: "POST", url: server.base + "/late", body: [1]))
                Issue.record("a 3 s answer beat a 1 s timeout")
            } catch {
                #expect(error.isTimeout)
                #expect(ContinuousClock.now - started >= .milliseconds(900), "ended at the first request's timeout")
            }
            #expect(try await first.status == 200)
        }
    }

    /// A late answer for a request whose client hung up goes nowhere: not to the next client, whose connection may
    /// be given the gone one's place (an answer was once found by the connection's address; this setup did not
    /// reproduce that, so the test guards the property, not that fix).
    @Test func aLateAnswerDoesNotReachTheNextClient() async throws {
        let server = try Server { request, respond in
            let delay: Double = request.path.hasPrefix("/late") ? 0.25 : 0.5
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                respond(HTTPServerResponse(status: 200, json: "\"\(request.path)\""))
            }
        }
        var impatient = HTTPClient.Options()
        impatient.totalTimeout = .milliseconds(50)
        for round in 0..<3 {
            _ = try? await HTTPClient(options: impatient).send(HTTPRequest(method: "GET", url: server.base + "/late/\(round)"))
            try await Task.sleep(for: .milliseconds(50))  // the server sees the hang-up (and frees the connection) first
            let answer = try await HTTPClient().send(HTTPRequest(method: "GET", url: server.base + "/own/\(round)"))
            #expect(answer.bodyText == "\"/own/\(round)\"", "round \(round)")
        }
    }

    @Test(arguments: Driving.allCases) func aRefusedConnectionIsATransportError(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let listener = try Server { _, respond in respond(HTTPServerResponse(status: 200)) }
            let port = listener.loop.listenPort
            listener.loop.shutdown()
            do throws(HTTPTransportError) {
                _ = try await host.client().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/"))
                Issue.record("a closed port answered")
            } catch {
                #expect(error.code == 7)
                #expect(!error.isTimeout)
            }
        }
    }

    @Test(arguments: Driving.allCases) func connectionsAreReusedAcrossRequests(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let server = try Server { _, respond in respond(HTTPServerResponse(status: 200, json: "{}")) }
            let client = host.client()
            var opened: [Int] = []
            for _ in 0..<5 {
                opened.append(try await client.send(HTTPRequest(method: "POST", url: server.base + "/notify", body: [0x7B, 0x7D])).connectionsOpened)
            }
            #expect(server.recorder.requests.withLock { $0.count } == 5)
            // One connection carries them. Under ThreadSanitizer with every suite running at once, the test server has
            // once dropped the kept-alive connection between two requests (a second one opened): without reuse all five
            // would open one.
            #expect(opened.first == 1)
            #expect(opened.reduce(0, +) <= 2, "\(opened)")
        }
    }

    /// Requests to one host run concurrently up to the bound — the server answers a set only once that many have
    /// arrived (the last, smaller set once every request has): a client running them one at a time would never get its
    /// first answer — and the rest wait their turn: twenty requests never have more than eight open at once.
    @Test(arguments: Driving.allCases) func requestsOfOneClientRunConcurrentlyUpToTheBound(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let bound = TransferTable.maximumConnectionsPerHost, total = bound * 2 + bound / 2
            let held = Locked<(waiting: [@Sendable (HTTPServerResponse) -> Void], arrived: Int, most: Int)>(([], 0, 0))
            let server = try Server { _, respond in
                let all = held.withLock { held -> [@Sendable (HTTPServerResponse) -> Void] in
                    held.waiting.append(respond)
                    held.arrived += 1
                    held.most = max(held.most, held.waiting.count)
                    guard held.waiting.count == bound || held.arrived == total else { return [] }
                    defer { held.waiting = [] }
                    return held.waiting
                }
                for answer in all { answer(HTTPServerResponse(status: 204)) }
            }
            let client = host.client()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for n in 0..<total {
                    group.addTask { try await client.send(HTTPRequest(method: "POST", url: server.base + "/notify/\(n)", body: [0x7B, 0x7D])).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 204, count: total))
            #expect(held.withLock(\.most) == bound, "at most \(bound) at once, and that many")
        }
    }

    /// A cancelled request ends at once, running or queued behind its host's bound, and the client goes on: a service
    /// stopping does not wait out a server that never answers (the total timeout is 15 s; the test's limit is 1 min).
    @Test(arguments: Driving.allCases) func aCancelledRequestEndsAtOnceRunningOrQueued(_ driving: Driving) async throws {
        let host = try ClientHost(driving)
        try await host.sending {
            let held = Locked<[@Sendable (HTTPServerResponse) -> Void]>([])
            let (allRunning, running) = AsyncStream.makeStream(of: Void.self)
            let server = try Server { request, respond in
                guard request.path != "/quick" else { return respond(HTTPServerResponse(status: 204)) }
                if held.withLock({ $0.append(respond); return $0.count }) == TransferTable.maximumConnectionsPerHost { running.yield() }
            }
            let client = host.client()
            // One more than the bound: the last waits in the client's queue.
            let count = TransferTable.maximumConnectionsPerHost + 1
            let sending = Task {
                await withTaskGroup(of: Int32.self) { group in
                    for n in 0..<count {
                        group.addTask {
                            do { _ = try await client.send(HTTPRequest(method: "POST", url: server.base + "/hang/\(n)", body: [0x7B, 0x7D])); return 0 }
                            catch let error as HTTPTransportError { return Int32(error.code) } catch { return -1 }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
            }
            for await _ in allRunning { break }
            sending.cancel()
            let codes = await sending.value
            #expect(codes == Array(repeating: 42, count: count), "CURLE_ABORTED_BY_CALLBACK for each")
            #expect(try await client.send(HTTPRequest(method: "GET", url: server.base + "/quick")).status == 204)
            for answer in held.withLock({ $0 }) { answer(HTTPServerResponse(status: 204)) }
        }
    }

    /// A client on an event loop that stops: what is unanswered fails at once, saying why, and so does what comes
    /// after; nothing waits out the 15 s timeout.
    @Test func aStoppedLoopFailsItsClientsTransfersAtOnce() async throws {
        let held = Locked<[@Sendable (HTTPServerResponse) -> Void]>([])
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let server = try Server { _, respond in
            held.withLock { $0.append(respond) }
            arrived.yield()
        }
        let host = try ClientHost(.eventLoop)
        let client = host.client()
        let sending = Task { try await host.sending { try await client.send(HTTPRequest(method: "POST", url: server.base + "/hang", body: [0x7B, 0x7D])) } }
        for await _ in arrivals { break }
        host.loop?.shutdown()
        do {
            _ = try await sending.value
            Issue.record("a transfer on a stopped loop was answered")
        } catch let error as HTTPTransportError {
            #expect(error.code == 42)
            #expect(error.description.contains("the event loop the HTTP client ran on has stopped"), "\(error)")
        }
        do throws(HTTPTransportError) {
            _ = try await client.send(HTTPRequest(method: "GET", url: server.base + "/after"))
            Issue.record("a transfer after the loop stopped was sent")
        } catch {
            #expect(error.code == 42)
        }
        for answer in held.withLock({ $0 }) { answer(HTTPServerResponse(status: 204)) }
    }

    /// Clients on a loop spend its descriptor budget once, however many there are: Home Assistant's loop is made for
    /// 4 connections (8 descriptors), and each backend has a client of its own (an outside review found the 8th
    /// client's every push failing when each adopted its own epoll set there).
    @Test func manyClientsOnALoopWithFewDescriptors() async throws {
        let server = try Server { _, respond in respond(HTTPServerResponse(status: 204)) }
        var options = WebSocketEventLoop.Options()
        options.usesTLS = false
        options.maximumConnections = 4
        let loop = try WebSocketEventLoop(options: options)
        loop.start()
        defer { loop.shutdown() }
        var statuses: [Int] = []
        var clients: [HTTPClient] = []
        for n in 0..<12 {
            let client = HTTPClient(on: loop)
            clients.append(client)
            statuses.append(try await client.send(HTTPRequest(method: "GET", url: server.base + "/\(n)")).status)
        }
        #expect(statuses == Array(repeating: 204, count: 12))
        withExtendedLifetime(clients) {}
    }

    /// A cancel on the loop's thread can come before the start it cancels (handed over from another thread, still
    /// queued): the transfer then ends when it arrives, cancelled, and is never sent.
    @Test func aCancelThatOvertakesItsStartEndsIt() async throws {
        let server = try Server { _, respond in respond(HTTPServerResponse(status: 204)) }
        let host = try ClientHost(.eventLoop)
        let loop = try #require(host.loop)
        let driver = HostedTransfers(loop: loop, options: HTTPClient.Options())
        let result = await withCheckedContinuation { (done: CheckedContinuation<Result<HTTPResponse, HTTPTransportError>, Never>) in
            let transfer = Transfer(request: HTTPRequest(method: "GET", url: server.base + "/cancelled"), limits: HTTPClient.Options()) { done.resume(returning: $0) }
            loop.perform {
                driver.cancel(transfer)
                driver.submit(transfer)
            }
        }
        guard case .failure(let error) = result else { Issue.record("a cancelled transfer was sent: \(result)"); return }
        #expect(error.code == 42)
        #expect(server.recorder.requests.withLock(\.count) == 0)
        driver.shutdown()
    }

    @Test func authorizationIsMaskedForDisplay() {
        let request = HTTPRequest(method: "POST", url: "https://x", headers: [("Authorization", "Bearer abc123"), ("Content-Type", "application/json")])
        #expect(request.redactedHeaders == ["Authorization: Bearer ****", "Content-Type: application/json"])
    }
}
