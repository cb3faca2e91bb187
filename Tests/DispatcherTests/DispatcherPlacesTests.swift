import Dispatcher
import Foundation
import JSON
import LiveActivity
import Platform
import Synchronization
import Testing

/// A bounded backend's places (written by the session's second reviewer): no more than `sendsAtOnce` at once, no place
/// leaked (each test ends by checking that exactly `places` new starts go at once), every start and end delivered.
@Suite(.timeLimit(.minutes(1)))
struct DispatcherPlacesTests {
    /// Answers after a few yields; every `failEvery`th call answers 503 (retried). When `holding`, pushes wait for `release`.
    final class StressBackend: PushBackend, @unchecked Sendable {
        let name: String
        let allowsOneActiveJob: Bool
        let sendsAtOnce: Int?
        let failEvery: Int
        struct State {
            var running = 0, most = 0, calls = 0, delivered: [String: [String]] = [:], holding = false, held: [Latch] = []
            /// Every send by job, "start" or "end", a refused one marked "start✗".
            var attempted: [String: [String]] = [:]
        }
        let state = Locked(State())
        let (arrivals, arrived) = AsyncStream.makeStream(of: String.self)
        init(_ name: String = "stress", sendsAtOnce: Int? = 3, oneJob: Bool = false, failEvery: Int = 7) {
            self.name = name
            self.sendsAtOnce = sendsAtOnce
            self.allowsOneActiveJob = oneJob
            self.failEvery = failEvery
        }
        func deliver(_ request: BackendRequest, kind: PushKind) async -> DeliveryReport {
            let job = request.body["job_id"]?.stringValue ?? "?"
            let latch = Latch()
            let (n, hold) = state.withLock { s -> (Int, Bool) in
                s.running += 1; s.most = max(s.most, s.running); s.calls += 1
                if s.holding { s.held.append(latch) }
                return (s.calls, s.holding)
            }
            arrived.yield("\(job) \(kind.rawValue)")
            if hold { await latch.wait() } else { for _ in 0..<(n % 5) { await Task.yield() } }
            let fail = !hold && failEvery > 0 && n % failEvery == 0
            state.withLock { s in
                s.running -= 1
                if !fail { s.delivered[job, default: []].append(kind.rawValue) }
                if kind != .update { s.attempted[job, default: []].append(kind.rawValue + (fail ? "✗" : "")) }
            }
            return fail ? DeliveryReport(.retry(after: nil), status: 503) : DeliveryReport(.delivered, status: 200)
        }
        func releaseAll() { for l in state.withLock({ s -> [Latch] in defer { s.held = [] }; return s.held }) { l.trigger() } }
    }

    /// Renders; every `nilEvery`th render (and renewal) is nil.
    final class Source: PayloadSource, @unchecked Sendable {
        let backend: String
        let nilEvery: Int
        let count = Locked(0), renewalCalls = Locked(0)
        let (renewalAsked, askRenewal) = AsyncStream.makeStream(of: Int.self)
        init(backend: String, nilEvery: Int) { self.backend = backend; self.nilEvery = nilEvery }
        func req(_ activity: String, _ action: String) -> BackendRequest {
            BackendRequest(backend: backend, kind: .islandpulse, method: "POST", target: "/notify",
                           body: ["job_id": .string(activity), "action": .string(action), "message": .string("m\(UUID().uuidString)")])
        }
        func payload(activity: String, target: String, kind: PushKind) async -> BackendRequest? {
            let n = count.withLock { $0 += 1; return $0 }
            await Task.yield()
            return n % nilEvery == 0 ? nil : req(activity, kind.rawValue)
        }
        func renewal(activity: String, target: String) async -> (end: BackendRequest, start: BackendRequest)? {
            let n = renewalCalls.withLock { $0 += 1; return $0 }
            askRenewal.yield(n)
            return n % 7 == 0 ? nil : (req(activity, "end"), req(activity, "start"))
        }
    }

    let fastRetry = RetryPolicy(initial: .milliseconds(5), maximum: .milliseconds(20), lockedWait: .milliseconds(30))

    func request(_ backend: String, _ job: String, _ action: String) -> BackendRequest {
        BackendRequest(backend: backend, kind: .islandpulse, method: "POST", target: "/notify",
                       body: ["job_id": .string(job), "action": .string(action), "message": .string("\(action)\(UUID().uuidString)")])
    }

    func submission(_ backend: String, _ id: String, _ budget: UpdateBudget, _ event: Dispatcher.Event, eventBorn: Bool) -> Dispatcher.Submission {
        var s = Dispatcher.Submission(activity: id, backend: backend, budget: budget, event: event)
        s.eventBorn = eventBorn
        return s
    }

    /// After all is quiet: `places` new starts all go at once (none of the places leaked), the next waits.
    func expectNoLeakedPlace(_ backend: StressBackend, _ dispatcher: Dispatcher, budget: UpdateBudget, round: Int) async {
        let places = backend.sendsAtOnce!
        backend.state.withLock { $0.holding = true; $0.most = 0 }
        for k in 0...places {
            await dispatcher.submit(activity: "probe\(round)-\(k)", backend: backend.name, budget: budget, .start(request(backend.name, "probe\(round)-\(k)", "start")))
        }
        // Hangs here (time limit) if a place leaked.
        if backend.state.withLock({ $0.held.count }) < places {
            for await _ in backend.arrivals where backend.state.withLock({ $0.held.count }) >= places { break }
        }
        #expect(backend.state.withLock { $0.running } == places)
        backend.state.withLock { $0.holding = false }
        backend.releaseAll()
        await dispatcher.waitUntilQuiet()
        backend.releaseAll()
        for k in 0...places {
            await dispatcher.submit(activity: "probe\(round)-\(k)", backend: backend.name, budget: budget, .end(request(backend.name, "probe\(round)-\(k)", "end")))
        }
        await dispatcher.waitUntilQuiet()
        #expect(backend.state.withLock { $0.most } <= places)
    }

    @Test(arguments: [false, true])
    func fortyLanesManyCyclesWithRendersThroughABoundedBackend(eventBorn: Bool) async {
        let backend = StressBackend("stress", sendsAtOnce: 3, failEvery: 7)
        let budget = UpdateBudget(debounce: .milliseconds(2), maxWait: .milliseconds(10), minInterval: .milliseconds(3))
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry, eventBornLimit: 1000)
        await dispatcher.setPayloadSource(Source(backend: "stress", nilEvery: 3))
        let run = Task { await dispatcher.run() }
        defer { run.cancel() }
        let lanes = 40, rounds = 4
        for round in 0..<rounds {
            for n in 0..<lanes {
                await dispatcher.submit(submission("stress", "a\(n)", budget, .start(request("stress", "a\(n)", "start")), eventBorn: eventBorn))
            }
            // Changes while starts are queued and in flight, then more after.
            for step in 0..<6 {
                for n in 0..<lanes {
                    await dispatcher.submit(submission("stress", "a\(n)", budget, .changed(urgent: (n + step) % 3 == 0), eventBorn: eventBorn))
                }
                if step == 2 { await dispatcher.waitUntilQuiet() }
            }
            await dispatcher.waitUntilQuiet()
            for n in 0..<lanes where n % 2 == round % 2 {
                await dispatcher.submit(submission("stress", "a\(n)", budget, .changed(urgent: true), eventBorn: eventBorn))
            }
            for n in 0..<lanes {
                await dispatcher.submit(submission("stress", "a\(n)", budget, .end(request("stress", "a\(n)", "end")), eventBorn: eventBorn))
            }
            await dispatcher.waitUntilQuiet()
            let delivered = backend.state.withLock { $0.delivered }
            for n in 0..<lanes {
                let d = (delivered["a\(n)"] ?? []).filter { $0 != "update" }
                #expect(d == Array(repeating: ["start", "end"], count: round + 1).flatMap { $0 }, "a\(n) round \(round): \(d)")
            }
            #expect(backend.state.withLock { $0.most } <= 3)
            if eventBorn { #expect(await dispatcher.lanes.filter { $0.activity.hasPrefix("a") }.isEmpty) }
        }
        let updates = backend.state.withLock { $0.delivered.values.map { $0.filter { $0 == "update" }.count }.reduce(0, +) }
        #expect(updates > 0)
        await expectNoLeakedPlace(backend, dispatcher, budget: budget, round: 0)
    }

    /// Renewals (some renders of them nil) on a one-place backend: each renewal keeps/gives back its place.
    @Test(arguments: [1, nil] as [Int?]) func renewalsThroughAOnePlaceBackend(places: Int?) async {
        let backend = StressBackend("stress", sendsAtOnce: places, failEvery: 5)
        var budget = UpdateBudget(debounce: .milliseconds(2), maxWait: .milliseconds(10), minInterval: .milliseconds(3))
        budget.renewAfter = .milliseconds(15)
        let (renewals, renewed) = AsyncStream.makeStream(of: Void.self)
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry, info: { _ in renewed.yield() })
        let source = Source(backend: "stress", nilEvery: 3)
        await dispatcher.setPayloadSource(source)
        let run = Task { await dispatcher.run() }
        defer { run.cancel() }
        for n in 0..<6 { await dispatcher.submit(activity: "r\(n)", backend: "stress", budget: budget, .start(request("stress", "r\(n)", "start"))) }
        _ = renewals
        var it = source.renewalAsked.makeAsyncIterator()
        for step in 0..<20 {
            _ = await it.next()
            await dispatcher.submit(activity: "r\(step % 6)", backend: "stress", budget: budget, .changed(urgent: step % 2 == 0))
        }
        for n in 0..<6 { await dispatcher.submit(activity: "r\(n)", backend: "stress", budget: budget, .end(request("stress", "r\(n)", "end"))) }
        await dispatcher.waitUntilQuiet()
        let (delivered, attempted) = backend.state.withLock { ($0.delivered, $0.attempted) }
        for n in 0..<6 {
            let d = (delivered["r\(n)"] ?? []).filter { $0 != "update" }
            #expect(d.last == "end", "r\(n): \(d)")
            #expect(d.first == "start")
            // Never two starts delivered in a row. Two ends only around a start that was refused: an end that came
            // while the renewal's start was out goes even if that start fails (it may have reached the phone).
            let sends = (attempted["r\(n)"] ?? []).filter { $0 != "end✗" }
            let ok = sends.filter { !$0.hasSuffix("✗") }
            #expect(zip(ok, ok.dropFirst()).allSatisfy { !($0 == "start" && $1 == "start") }, "r\(n): \(sends)")
            var lastEnd: Int?
            for (i, send) in sends.enumerated() where send == "end" {
                if let last = lastEnd { #expect(sends[last..<i].contains { $0.hasPrefix("start") }, "r\(n): \(sends)") }
                lastEnd = i
            }
        }
        guard places != nil else { return }
        #expect(backend.state.withLock { $0.most } <= 1)
        var plain = budget
        plain.renewAfter = nil
        await expectNoLeakedPlace(backend, dispatcher, budget: plain, round: 1)
    }

    /// Free tier (one job at a time) on a one-place backend: a start locked out gives its place back, so the running
    /// job's updates and end still go; the locked start goes after the end.
    @Test func aLockedStartGivesBackItsPlace() async {
        let backend = StressBackend("free", sendsAtOnce: 1, oneJob: true, failEvery: 0)
        let budget = UpdateBudget(debounce: .milliseconds(2), maxWait: .milliseconds(10), minInterval: .milliseconds(3))
        let (logs, logged) = AsyncStream.makeStream(of: String.self)
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry, log: { logged.yield($0) })
        await dispatcher.setPayloadSource(Source(backend: "free", nilEvery: 2))
        let run = Task { await dispatcher.run() }
        defer { run.cancel() }
        await dispatcher.submit(activity: "a", backend: "free", budget: budget, .start(request("free", "a", "start")))
        await dispatcher.waitUntilQuiet()
        for n in 0..<3 { await dispatcher.submit(activity: "b\(n)", backend: "free", budget: budget, .start(request("free", "b\(n)", "start"))) }
        for await line in logs where line.contains("free tier") { break }
        for k in 0..<6 {
            await dispatcher.submit(activity: "a", backend: "free", budget: budget, .change(request("free", "a", "u\(k)"), urgent: true))
        }
        await dispatcher.submit(activity: "a", backend: "free", budget: budget, .end(request("free", "a", "end")))
        // Waits for a's pushes: hangs (time limit) if the locked starts kept the one place.
        for await push in backend.arrivals where push == "a end" { break }
        for n in 0..<3 { await dispatcher.submit(activity: "b\(n)", backend: "free", budget: budget, .end(request("free", "b\(n)", "end"))) }
        await dispatcher.waitUntilQuiet()
        let delivered = backend.state.withLock { $0.delivered }
        #expect(delivered["a"]?.first == "start" && delivered["a"]?.last == "end")
        #expect(backend.state.withLock { $0.most } <= 1)
        // b0 goes after a's end; b1, b2 are ended while locked (their starts never went) or after their start.
        for n in 0..<3 {
            let d = delivered["b\(n)"] ?? []
            #expect(d == [] || d == ["start", "end"], "b\(n): \(d)")
        }
    }

    /// Flush with lanes queued behind full places: it waits for them (does not return early) and all ends go.
    @Test func flushWaitsForQueuedLanes() async {
        let backend = StressBackend("stress", sendsAtOnce: 2, failEvery: 0)
        let budget = UpdateBudget(debounce: .seconds(30), maxWait: .seconds(60), minInterval: .milliseconds(3))
        let dispatcher = Dispatcher(backends: [backend], retry: fastRetry)
        await dispatcher.setPayloadSource(Source(backend: "stress", nilEvery: 4))
        let run = Task { await dispatcher.run() }
        defer { run.cancel() }
        for n in 0..<20 { await dispatcher.submit(activity: "f\(n)", backend: "stress", budget: budget, .start(request("stress", "f\(n)", "start"))) }
        await dispatcher.waitUntilQuiet()
        backend.state.withLock { $0.holding = true }
        for n in 0..<20 { await dispatcher.submit(activity: "f\(n)", backend: "stress", budget: budget, .changed(urgent: false)) }
        for n in 0..<20 where n % 2 == 0 { await dispatcher.submit(activity: "f\(n)", backend: "stress", budget: budget, .end(request("stress", "f\(n)", "end"))) }
        let flushing = Task { await dispatcher.flush(deadline: .seconds(50)) }
        if backend.state.withLock({ $0.held.count }) < 2 {
            for await _ in backend.arrivals where backend.state.withLock({ $0.held.count }) >= 2 { break }
        }
        backend.state.withLock { $0.holding = false }
        backend.releaseAll()
        let ok = await flushing.value
        #expect(ok)
        backend.releaseAll()
        let delivered = backend.state.withLock { $0.delivered }
        for n in 0..<20 where n % 2 == 0 { #expect(delivered["f\(n)"]?.last == "end", "f\(n): \(delivered["f\(n)"] ?? [])") }
        #expect(backend.state.withLock { $0.most } <= 2)
        await expectNoLeakedPlace(backend, dispatcher, budget: UpdateBudget(debounce: .milliseconds(2), maxWait: .milliseconds(10), minInterval: .milliseconds(3)), round: 2)
    }
}
