import FoundationEssentials
import Glibc
import Synchronization

/// A program run by `posix_spawn` for the tests and the benchmark, its standard streams piped, sent to /dev/null,
/// read from a file or inherited; every other descriptor is closed in the child.
///
/// Not Foundation's `Process`: on Linux its `run` reads /proc/self/fd into a buffer that AddressSanitizer caught
/// overflowing (`findMaximumOpenFromProcSelfFD`), which made a sanitizer run fail at random.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable, Equatable {
        case inherit, null, pipe
        /// Read from this file (standard input only).
        case file(String)
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: Int32
    /// The parent's ends of the pipes asked for (the write end for standard input), owned by this object.
    public let standardInput: Int32?
    public let standardOutput: Int32?
    public let standardError: Int32?
    /// The status once reaped: the exit code, or the signal's number for a process a signal ended (as `Process` gave).
    private let reaped = Mutex<Int32?>(nil)
    /// Held while one caller waits in `waitpid`, so that a second caller waits for its answer instead of reaping twice.
    private let reaping = Mutex<Void>(())

    /// `environment` nil: the parent's. Pass `standardOutput` as `.pipe` for both to read them together (`collect`).
    public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                standardInput input: Stream = .null, standardOutput output: Stream = .inherit,
                standardError error: Stream = .inherit) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }
        func fail(_ what: String) -> SpawnError {
            let reason = SpawnError(description: "\(executable): \(what): \(String(cString: strerror(errno)))")
            parentEnds.forEach { if let fd = $0 { _ = close(fd) } }
            return reason
        }
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .inherit:
                continue
            case .null:
                guard posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0) == 0 else { throw fail("/dev/null") }
            case .file(let path):
                guard posix_spawn_file_actions_addopen(&actions, target, path, O_RDONLY, 0) == 0 else { throw fail(path) }
            case .pipe:
                var ends: [Int32] = [-1, -1]
                // Close-on-exec, so that a child spawned meanwhile on another thread does not hold this pipe open.
                guard Self.pipe2(&ends, O_CLOEXEC) == 0 else { throw fail("pipe") }
                let (parent, child) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds[Int(target)] = parent
                childEnds.append(child)
                posix_spawn_file_actions_adddup2(&actions, child, target)
            }
        }
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        // No signal blocked and every one at its default, whatever the spawning thread had (a daemon's signal
        // handling blocks SIGTERM; a child would inherit that and ignore its own SIGTERM).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let variables = environment.map { $0.map { "\($0.key)=\($0.value)" } }
        var child: pid_t = 0
        let result = Self.withCStrings([executable] + arguments) { argv in
            Self.withCStrings(variables ?? []) { envp in
                posix_spawn(&child, executable, &actions, &attributes, argv, variables == nil ? UnsafePointer(environ) : envp)
            }
        }
        guard result == 0 else {
            errno = result
            throw fail("could not be started")
        }
        pid = child
        (standardInput, standardOutput, standardError) = (parentEnds[0], parentEnds[1], parentEnds[2])
    }

    deinit {
        [standardInput, standardOutput, standardError].forEach { if let fd = $0 { _ = close(fd) } }
    }

    /// Runs `executable` to its end with its output and errors collected.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           standardInput: Stream = .null) throws -> (status: Int32, output: [UInt8], errors: [UInt8]) {
        let child = try ChildProcess(executable, arguments, environment: environment, standardInput: standardInput,
                                     standardOutput: .pipe, standardError: .pipe)
        let (output, errors) = child.collect()
        return (child.wait(), output, errors)
    }

    /// Reads the piped standard output and error until both end (the child exited or closed them).
    public func collect() -> (output: [UInt8], errors: [UInt8]) {
        var open = [standardOutput, standardError].compactMap { $0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var collected: [Int32: [UInt8]] = [:]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !open.isEmpty {
            guard poll(&open, nfds_t(open.count), -1) >= 0 || errno == EINTR else { break }
            open = open.filter { entry in
                guard entry.revents != 0 else { return true }
                let count = buffer.withUnsafeMutableBytes { read(entry.fd, $0.baseAddress, $0.count) }
                if count > 0 { collected[entry.fd, default: []] += buffer[0..<count]; return true }
                return count < 0 && (errno == EINTR || errno == EAGAIN)
            }.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
        }
        return (standardOutput.flatMap { collected[$0] } ?? [], standardError.flatMap { collected[$0] } ?? [])
    }

    /// Sends `number` unless the child has been reaped (its pid could by then be another process's).
    public func signal(_ number: Int32) {
        reaped.withLock { status in
            if status == nil { _ = kill(pid, number) }
        }
    }

    /// Waits for the child to exit; its exit code, or the number of the signal that ended it.
    @discardableResult
    public func wait() -> Int32 {
        reaping.withLock { _ in
            if let status = reaped.withLock({ $0 }) { return status }
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            reaped.withLock { $0 = status }
            return status
        }
    }

    /// The status if the child has exited (and reaps it), nil while it runs.
    public func statusIfExited() -> Int32? {
        reaping.withLock { _ in
            if let status = reaped.withLock({ $0 }) { return status }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            reaped.withLock { $0 = status }
            return status
        }
    }

    /// `pipe2`, which Swift's Glibc module leaves out (a GNU extension in glibc's headers; in every glibc since 2.9).
    private static let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { fatalError("the C library has no pipe2") }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()

    /// glibc ≥ 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module leaves out.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
