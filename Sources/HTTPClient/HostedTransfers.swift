import CCurl
import Platform
import Synchronization
import WebSocketTransport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libcurl driven on an event loop's thread, beside its sockets: the daemon's backends push from the thread that
/// reads Home Assistant, so a push wakes no other thread (a thread of its own cost two wake-ups per push, the
/// request's and the answer's, and a third for the socket's thread to take the answer; `docs/performance.md`).
///
/// libcurl's socket interface: the sockets it asks to be watched go into one epoll set, which the loop polls with its
/// own sockets (`WebSocketEventLoop.watch`), and its timeouts are the loop's timers. Everything is made on
/// the loop's thread at the first transfer and touched there only. A transfer handed over from another thread goes
/// through `perform`. When the loop stops, what is unanswered fails (`the event loop stopped`) and later transfers
/// fail at once: the daemon's loop outlives its pushes (the service flushes them before it closes the connection).
final class HostedTransfers: TransferDriver, @unchecked Sendable {
    private enum Phase { case idle, watching, over }

    private let loop: WebSocketEventLoop
    private let options: HTTPClient.Options
    /// Read off the loop's thread only by `shutdown`, once the loop refuses work (then to learn who cleans up).
    private let phase = Locked(Phase.idle)
    // Confined to the loop's thread; made at the first transfer.
    private var table: TransferTable?
    private var epollSet: Int32 = -1
    /// When libcurl wants its timeouts acted on (nil: not at all), as it last said (`timeoutMoved`).
    private var timeoutDue: ContinuousClock.Instant?
    /// The loop's timer for it, and when that goes off: never after `timeoutDue`; before it only when libcurl moved
    /// its timeout later since (the timer then finds it early and is set again). libcurl moves its timeout several
    /// times a request (a timer set and cancelled each time was ~7,000 instructions a push): it is set after libcurl
    /// acted (`act`), once, and only when it would go off too late.
    private var timer: (token: WebSocketEventLoop.TimerToken, at: ContinuousClock.Instant)?
    private var watch: DescriptorWatch?
    private static let batch = 32
    private let readyDescriptors = UnsafeMutablePointer<Int32>.allocate(capacity: batch)
    private let readyFlags = UnsafeMutablePointer<Int32>.allocate(capacity: batch)

    init(loop: WebSocketEventLoop, options: HTTPClient.Options) {
        TransferTable.initialise
        self.loop = loop
        self.options = options
    }

    deinit {
        readyDescriptors.deallocate()
        readyFlags.deallocate()
    }

    func submit(_ transfer: Transfer) {
        if loop.isInEventLoop { start(transfer); return }
        if !loop.perform({ [self] in start(transfer) }) { transfer.completion(.failure(Self.loopStopped)) }
    }

    func cancel(_ transfer: Transfer) {
        if loop.isInEventLoop { abandon(transfer); return }
        loop.perform { [self] in abandon(transfer) }
    }

    func shutdown() {
        if loop.isInEventLoop { end(failing: TransferTable.shutDown); return }
        if loop.perform({ [self] in end(failing: TransferTable.shutDown) }) { return }
        // The loop is stopping: with a watch made, the loop ends it (`ended`) as its context goes, and everything with
        // it; without one, nothing was made.
        phase.withLock { if $0 == .idle { $0 = .over } }
    }

    private static let loopStopped = TransferTable.aborted("the event loop the HTTP client ran on has stopped")

    private func start(_ transfer: Transfer) {
        guard !transfer.abandoned else { transfer.completion(.failure(TransferTable.cancelled)); return }
        guard let table = prepared() else {
            transfer.completion(.failure(phase.withLock { $0 } == .over ? Self.loopStopped
                : HTTPTransportError(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "libcurl's sockets cannot be polled on the event loop (no descriptor left for an epoll set, or no room in the loop)", isTimeout: false)))
            return
        }
        table.admit(transfer)
        act(on: CURL_SOCKET_TIMEOUT, flags: 0)
    }

    private func abandon(_ transfer: Transfer) {
        transfer.abandoned = true
        guard let table, phase.withLock({ $0 }) == .watching else { return }
        table.abandon(transfer)
        act(on: CURL_SOCKET_TIMEOUT, flags: 0)
    }

    /// The table, made with its epoll set and watch at the first transfer; nil once over, or when they cannot be made.
    private func prepared() -> TransferTable? {
        loop.preconditionInEventLoop()
        switch phase.withLock({ $0 }) {
        case .over: return nil
        case .watching: return table
        case .idle: break
        }
        epollSet = ccurl_epoll_make()
        guard epollSet >= 0 else { return nil }
        let table = TransferTable(options: options)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socket_function(table.multi, socketCallback)
        _ = ccurl_multi_setopt_pointer(table.multi, CURLMOPT_SOCKETDATA, me)
        _ = ccurl_multi_setopt_timer_function(table.multi, timerCallback)
        _ = ccurl_multi_setopt_pointer(table.multi, CURLMOPT_TIMERDATA, me)
        // The watch holds this driver until the loop ends or the client shuts down.
        guard let watch = loop.watch(epollSet, readable: { [self] in ready() }, ended: { [self] in end(failing: Self.loopStopped) }) else {
            table.close(failing: Self.loopStopped)
            stopTimer()
            closeDescriptors()
            return nil
        }
        self.table = table
        self.watch = watch
        phase.withLock { $0 = .watching }
        return table
    }

    /// Something in the epoll set is ready: libcurl acts on each ready socket.
    private func ready() {
        while true {
            let count = Int(ccurl_epoll_ready(epollSet, readyDescriptors, readyFlags, Int32(Self.batch)))
            guard count > 0 else { break }
            for i in 0..<count { act(on: readyDescriptors[i], flags: readyFlags[i]) }
            if count < Self.batch { break }
        }
    }

    /// libcurl acts on `socket` (or its timeouts), then what finished is answered.
    private func act(on socket: curl_socket_t, flags: Int32) {
        guard let table else { return }
        var running: Int32 = 0
        curl_multi_socket_action(table.multi, socket, flags, &running)
        table.collectFinished()
        setTimer()
    }

    /// Called by libcurl (inside `act`): watch `socket` for `what`. `known`: marked at its add (libcurl's socket
    /// pointer, which it forgets at the removal), so a request's watch costs an add and a delete, not a failed change too.
    fileprivate func watchSocket(_ socket: curl_socket_t, _ what: Int32, known: Bool) {
        guard ccurl_epoll_watch(epollSet, socket, what, known ? 1 : 0) == 0, !known, what != CURL_POLL_REMOVE,
              let multi = table?.multi else { return }
        // The mark: any pointer but nil (nothing reads it).
        curl_multi_assign(multi, socket, UnsafeMutableRawPointer(bitPattern: 1))
    }

    /// Called by libcurl (inside `act` or `admit`, which `act` follows): act on its timeouts after `milliseconds`
    /// (-1: no timeout). Noted only: `act` sets the loop's timer when libcurl is done, and the timer runs outside
    /// libcurl's calls, as libcurl requires.
    fileprivate func timeoutMoved(_ milliseconds: Int) {
        timeoutDue = milliseconds >= 0 ? ContinuousClock.now.advanced(by: .milliseconds(milliseconds)) : nil
    }

    /// The loop's timer, set for `timeoutDue` unless it goes off by then already (a timer set and no timeout due
    /// stays: it finds nothing to do).
    private func setTimer() {
        guard let due = timeoutDue else { return }
        if let timer {
            guard timer.at > due else { return }
            loop.cancel(timer.token)
        }
        // Held, not weakly: a weak reference would move this object's reference count to a side table, and every
        // retain of it on the push path would take the slow way. The timer is cancelled when the transfers end.
        timer = (loop.schedule(at: due) { [self] in timerWentOff() }, due)
    }

    private func timerWentOff() {
        timer = nil
        guard let due = timeoutDue else { return }
        guard due <= .now else { setTimer(); return }
        timeoutDue = nil
        act(on: CURL_SOCKET_TIMEOUT, flags: 0)
    }

    private func stopTimer() {
        if let timer { loop.cancel(timer.token) }
        timer = nil
        timeoutDue = nil
    }

    /// The client shut down (on the loop's thread) or the loop stopped (`ended`): what is unanswered fails.
    private func end(failing error: HTTPTransportError) {
        let was = phase.withLock { phase in
            defer { phase = .over }
            return phase
        }
        guard was == .watching else { return }
        if let watch, watch.isWatching { loop.unwatch(watch) }
        watch = nil
        table?.close(failing: error)
        stopTimer()  // after the close, which may move libcurl's timeout once more
        table = nil
        closeDescriptors()
    }

    private func closeDescriptors() {
        if epollSet >= 0 { close(epollSet) }
        epollSet = -1
    }
}

private func socketCallback(_ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32,
                            _ user: UnsafeMutableRawPointer?, _ socketData: UnsafeMutableRawPointer?) -> Int32 {
    guard let user else { return 0 }
    Unmanaged<HostedTransfers>.fromOpaque(user).takeUnretainedValue().watchSocket(socket, what, known: socketData != nil)
    return 0
}

private func timerCallback(_ multi: UnsafeMutableRawPointer?, _ milliseconds: Int, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let user else { return 0 }
    Unmanaged<HostedTransfers>.fromOpaque(user).takeUnretainedValue().timeoutMoved(milliseconds)
    return 0
}
