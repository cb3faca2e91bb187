import FoundationEssentials
import Glibc
import Synchronization

/// A program run by `posix_spawn` for the tests and the benchmark, its standard streams piped, sent to /dev/null,
/// to or from a file, or inherited; every other descriptor is closed in the child.
///
/// Not Foundation's `Process`: on Linux its `run` reads /proc/self/fd into a buffer that AddressSanitizer caught
/// overflowing (`findMaximumOpenFromProcSelfFD`), which made a sanitizer run fail at random.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable, Equatable {
        case inherit, null, pipe
        /// Read from this file (standard input), or written to it, created or emptied (output and error).
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
    /// The status once reaped: the exit code, the signal's number for a process a signal ended (as `Process` gave),
    /// or -1 for a child that could not be waited for (another waiter of the process reaped it). A signal is sent
    /// only under this lock while it is nil, and the child is reaped only under it: never to a reaped child's pid,
    /// which could by then be another process's.
    private let reaped = Mutex<Int32?>(nil)

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
        /// `code`: the error number the failed call returned or left in errno.
        func fail(_ what: String, _ code: Int32) -> SpawnError {
            parentEnds.forEach { if let fd = $0 { _ = close(fd) } }
            return SpawnError(description: "\(executable): \(what): \(String(cString: strerror(code)))")
        }
        guard let closeFrom = Self.closeFrom else {
            throw SpawnError(description: "\(executable): this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)")
        }
        /// Standard output's file, when it goes to one.
        var outputDescriptor: Int32?
        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            var code: Int32 = 0
            switch stream {
            case .inherit:
                continue
            case .null:
                code = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                // Opened here, close-on-exec, and handed over: a file that cannot be is named (opened in the child,
                // its failure read as the program's), and a FIFO with no other end fails at once (ENXIO) instead of
                // holding the parent in posix_spawn (non-blocking to open, blocking again once open).
                let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                let file = open(path, flags | O_CLOEXEC | O_NONBLOCK, 0o644)
                guard file >= 0 else { throw fail(path, errno) }
                childEnds.append(file)
                _ = fcntl(file, F_SETFL, fcntl(file, F_GETFL) & ~O_NONBLOCK)
                // Output and error to one file (however it is spelled) share the open file: each would write over
                // the other's.
                var this = stat(), outputFile = stat()
                if target == 2, let opened = outputDescriptor, fstat(file, &this) == 0, fstat(opened, &outputFile) == 0,
                   this.st_dev == outputFile.st_dev, this.st_ino == outputFile.st_ino {
                    code = posix_spawn_file_actions_adddup2(&actions, opened, target)
                } else {
                    code = posix_spawn_file_actions_adddup2(&actions, file, target)
                }
                if target == 1 { outputDescriptor = file }
            case .pipe:
                var ends: [Int32] = [-1, -1]
                // Close-on-exec, so that a child spawned meanwhile on another thread does not hold this pipe open.
                guard Self.pipe2(&ends, O_CLOEXEC) == 0 else { throw fail("pipe", errno) }
                let (parent, child) = target == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                parentEnds[Int(target)] = parent
                childEnds.append(child)
                code = posix_spawn_file_actions_adddup2(&actions, child, target)
            }
            guard code == 0 else { throw fail("standard stream \(target)", code) }
        }
        let closing = closeFrom(&actions, 3)
        guard closing == 0 else { throw fail("closing its other descriptors", closing) }
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
        guard result == 0 else { throw fail("could not be started", result) }
        pid = child
        (standardInput, standardOutput, standardError) = (parentEnds[0], parentEnds[1], parentEnds[2])
    }

    deinit {
        [standardInput, standardOutput, standardError].forEach { if let fd = $0 { _ = close(fd) } }
    }

    /// Runs `executable` to its end with its output and errors collected (a piped standard input is closed at once:
    /// nothing is written to it).
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                           standardInput: Stream = .null) throws -> (status: Int32, output: [UInt8], errors: [UInt8]) {
        let child = try ChildProcess(executable, arguments, environment: environment,
                                     standardInput: standardInput == .pipe ? .null : standardInput,
                                     standardOutput: .pipe, standardError: .pipe)
        let (output, errors) = child.collect()
        return (child.wait(), output, errors)
    }

    /// Reads the piped standard output and error until both end: when the child and whatever it started that holds
    /// them (a process it left in the background) have exited or closed them.
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

    /// Reads `descriptor` (one of the pipes) to its end, blocking, handing each chunk to `body` as it comes, then an
    /// empty one at the end: for a thread of its own that follows a long-running child's output.
    public static func readChunks(of descriptor: Int32, _ body: ([UInt8]) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            body(Array(buffer[0..<max(count, 0)]))
            if count <= 0 { return }
        }
    }

    /// Sends `number` unless the child has been reaped.
    public func signal(_ number: Int32) {
        reaped.withLock { status in
            if status == nil { _ = kill(pid, number) }
        }
    }

    /// Waits for the child to exit: its exit code, the number of the signal that ended it, or -1 (see `reaped`).
    /// Several threads may wait at once.
    @discardableResult
    public func wait() -> Int32 {
        if let status = reaped.withLock({ $0 }) { return status }
        // Waited for without reaping (WNOWAIT), outside the lock: the child is reaped under it, below.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        return reapIfExited() ?? -1
    }

    /// The status if the child has exited (and reaps it), nil while it runs; it does not wait.
    public func statusIfExited() -> Int32? { reapIfExited() }

    private func reapIfExited() -> Int32? {
        reaped.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == 0 { return nil }
            status = result == pid ? (raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f) : -1
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
