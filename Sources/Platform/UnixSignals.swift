import Glibc

/// A Unix signal a daemon acts on.
public struct UnixSignal: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let hangup = UnixSignal(rawValue: SIGHUP)
    public static let interrupt = UnixSignal(rawValue: SIGINT)
    public static let terminate = UnixSignal(rawValue: SIGTERM)
    public static let user1 = UnixSignal(rawValue: SIGUSR1)
    public static let user2 = UnixSignal(rawValue: SIGUSR2)

    public var description: String {
        switch self {
        case .hangup: "SIGHUP"
        case .interrupt: "SIGINT"
        case .terminate: "SIGTERM"
        case .user1: "SIGUSR1"
        case .user2: "SIGUSR2"
        default: "signal \(rawValue)"
        }
    }
}

/// Unix signals as one async sequence, in the order they arrive (after swift-service-lifecycle's
/// `UnixSignalsSequence`). From `init` on the signals' default actions are off, so SIGTERM no longer ends the process
/// before its consumer has seen it; when the sequence is let go, they are delivered by default again. One consumer.
///
/// A handler writes the signal's number to a pipe (all a handler may safely do); a thread of its own, the only one
/// that does not block signals, takes them and reads the pipe. (A dispatch signal source with the signal ignored
/// misses a signal sent while another thread leaves it unblocked: the kernel discards an ignored signal at once.)
public final class UnixSignals: AsyncSequence, Sendable {
    public typealias Element = UnixSignal

    private let stream: AsyncStream<UnixSignal>
    private let continuation: AsyncStream<UnixSignal>.Continuation

    public init(_ signals: [UnixSignal]) {
        (stream, continuation) = AsyncStream.makeStream(of: UnixSignal.self)
        SignalPipe.shared.add(ObjectIdentifier(self), signals: signals, continuation: continuation)
    }

    deinit {
        SignalPipe.shared.remove(ObjectIdentifier(self))
        continuation.finish()
    }

    /// Keeps the sequence (and so the signal handling) alive while it is iterated.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let owner: UnixSignals
        fileprivate var signals: AsyncStream<UnixSignal>.Iterator

        public mutating func next() async -> UnixSignal? { await signals.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: self, signals: stream.makeAsyncIterator()) }
}

/// The write end of the signal pipe, for the handler (which can reach nothing but globals).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// The process's one signal pipe and who listens to which signal.
private final class SignalPipe: Sendable {
    static let shared = SignalPipe()

    private struct Listener {
        let signals: Set<Int32>
        let continuation: AsyncStream<UnixSignal>.Continuation
    }

    private let listeners = Locked<[ObjectIdentifier: Listener]>([:])

    private init() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { fatalError("pipe failed: \(errno)") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // A full pipe (thousands of signals unread) drops a signal rather than blocking the handler.
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        signalPipeWriteEnd = ends[1]
        let readEnd = ends[0]
        DetachedThread.start(name: "signals") { [self] in
            // The one thread that takes signals: the Swift runtime's and libdispatch's threads block them all, and a
            // thread inherits the mask of the one that made it.
            var none = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, nil)
            var number: UInt8 = 0
            while true {
                let count = read(readEnd, &number, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return }
                let signal = Int32(number)
                let continuations = listeners.withLock { $0.values.filter { $0.signals.contains(signal) }.map(\.continuation) }
                for continuation in continuations { continuation.yield(UnixSignal(rawValue: signal)) }
            }
        }
    }

    func add(_ id: ObjectIdentifier, signals: [UnixSignal], continuation: AsyncStream<UnixSignal>.Continuation) {
        listeners.withLock { $0[id] = Listener(signals: Set(signals.map(\.rawValue)), continuation: continuation) }
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(signalPipeWriteEnd, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            sigaction(signal.rawValue, &action, nil)
        }
    }

    /// Signals no one listens to any more get their default action back.
    func remove(_ id: ObjectIdentifier) {
        let released: Set<Int32> = listeners.withLock { listeners in
            guard let gone = listeners.removeValue(forKey: id) else { return [] }
            let stillHeard = listeners.values.reduce(into: Set<Int32>()) { $0.formUnion($1.signals) }
            return gone.signals.subtracting(stillHeard)
        }
        for signal in released { Glibc.signal(signal, SIG_DFL) }
    }
}
