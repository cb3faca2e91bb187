public import FoundationEssentials
import Glibc
public import JSON
public import LiveActivity
import Platform

/// What LiveBridge must remember across restarts and crashes: per activity and backend, whether it is running on the
/// phone and a digest of the body last delivered. With it a restart continues with updates (no second start, no 409
/// storm) and ends what ended while it was down.
public struct DeliveryState: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var running: Bool
        /// FNV-1a 64 of the last delivered body, hex: enough to tell "same as shown", not a secret.
        public var digest: String?
        /// An ended activity's final content is on the phone, to be cleared by this request at this time.
        public var dismissal: Dismissal?
        /// When the activity on the phone was started (seconds since 1970): it is renewed before iOS's eight hours.
        public var started: Double?
        /// The user swiped it away: nothing is sent to it until its next start.
        public var dismissed = false

        public init(running: Bool, digest: String?, dismissal: Dismissal? = nil, started: Double? = nil, dismissed: Bool = false) {
            self.running = running
            self.digest = digest
            self.dismissal = dismissal
            self.started = started
            self.dismissed = dismissed
        }

        /// Worth keeping: on a phone, or waiting to be cleared from one.
        var isKept: Bool { running || dismissal != nil }
    }

    /// The clear waiting after an end's final content: the service it calls, its body, when it goes (seconds
    /// since 1970, so it survives a restart).
    public struct Dismissal: Sendable, Equatable {
        public var target: String
        public var body: JSONValue
        public var at: Double
        /// The backend kind and method of the clear (Home Assistant's `call_service`, PushWard's `PATCH`).
        public var kind: BackendKind = .homeassistant
        public var method = "call_service"

        public init(target: String, body: JSONValue, at: Double, kind: BackendKind = .homeassistant, method: String = "call_service") {
            self.target = target
            self.body = body
            self.at = at
            self.kind = kind
            self.method = method
        }
    }

    /// Keyed by `activity@target` (the target is the backend's name, or `backend/notify.…` for one of its phones).
    public var entries: [String: Entry] = [:]
    /// Pushes through each device's Home Assistant relay today (UTC), by notify service.
    public var relays: [String: RelayBudget] = [:]

    public init(entries: [String: Entry] = [:], relays: [String: RelayBudget] = [:]) {
        self.entries = entries
        self.relays = relays
    }

    public static func key(activity: String, target: String) -> String { activity + "@" + target }

    /// A key's activity and target (backend names hold no `@`).
    public static func split(_ key: String) -> (activity: String, target: String)? {
        guard let at = key.lastIndex(of: "@") else { return nil }
        return (String(key[..<at]), String(key[key.index(after: at)...]))
    }

    /// The backend a target's pushes go through: its name up to the first `/` (backend names hold no `/`).
    public static func backend(ofTarget target: String) -> String {
        // By bytes: `/` is ASCII, and a Character search would break the name into graphemes first (once a push).
        target.utf8.firstIndex(of: UInt8(ascii: "/")).map { String(target[..<$0]) } ?? target
    }

    public static func digest(_ body: [UInt8]) -> String { ContentDigest.of(body) }
}

extension DeliveryState {
    /// The state file's text: compact JSON, keys sorted (as `JSONValue` writes it), written straight from the entries
    /// without a tree of every entry built first (a save a second, with hundreds of activities). A dismissal (rare)
    /// and the relays' counts (one per phone) go through `JSONValue`. `SavedState` reads it back.
    var fileBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + entries.count * 96)
        out.append(contentsOf: #"{"activities":{"#.utf8)
        var firstEntry = true
        for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
            if !firstEntry { out.append(UInt8(ascii: ",")) }
            firstEntry = false
            JSONValue.writeString(key, to: &out)
            // The entry's names in sorted order: digest, dismiss, dismissed, running, started.
            out.append(contentsOf: #":{"#.utf8)
            if let digest = entry.digest {
                out.append(contentsOf: #""digest":"#.utf8)
                JSONValue.writeString(digest, to: &out)
                out.append(UInt8(ascii: ","))
            }
            if let d = entry.dismissal {
                out.append(contentsOf: #""dismiss":"#.utf8)
                JSONValue.object(["target": .string(d.target), "body": d.body, "at": .double(d.at), "kind": .string(d.kind.rawValue),
                                  "method": .string(d.method)]).write(to: &out)
                out.append(UInt8(ascii: ","))
            }
            if entry.dismissed { out.append(contentsOf: #""dismissed":true,"#.utf8) }
            out.append(contentsOf: (entry.running ? #""running":true"# : #""running":false"#).utf8)
            if let started = entry.started {
                out.append(contentsOf: #","started":"#.utf8)
                JSONValue.double(started).write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"},"relays":"#.utf8)
        JSONValue.object(relays.filter { !$0.value.pushes.isEmpty }.mapValues { .array($0.pushes.map(JSONValue.double)) }).write(to: &out)
        out.append(contentsOf: #","version":1}"#.utf8)
        return out
    }
}

/// The state file in the data directory, written atomically: a temporary file, fsync, rename, fsync of the directory.
public struct DeliveryStateFile: Sendable {
    public struct FileError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    public let directory: String
    public var path: String { directory + "/state.json" }

    /// Checks the directory can be written, now, so a bad data directory is an error at start-up and not at the first push.
    public init(directory: String) throws {
        self.directory = directory
        var isDirectory = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw FileError(description: "cannot create the data directory \(directory): \(Self.reason(errno))")
            }
        } else if !isDirectory {
            throw FileError(description: "the data directory \(directory) is not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw FileError(description: "the data directory \(directory) is not writable: \(Self.reason(errno))")
        }
        // Looked at, not opened: opening a FIFO would block the start.
        var status = stat()
        if stat(path, &status) == 0, let kind = Self.notRegular(status.st_mode) {
            throw FileError(description: "the state file \(path) is \(kind), not a regular file: remove it (LiveBridge writes its own)")
        }
    }

    /// What a file that is not a regular one is, in words (nil: a regular file).
    static func notRegular(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: return "a FIFO"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        default: return "not a file"
        }
    }

    /// The largest state file read: thousands of entries fit in far less.
    static let largestFile = 8 << 20

    /// The saved state, each entry checked (`DeliveryState(json:now:warn:)`); a missing file is a clean start, a
    /// corrupt, oversized or irregular one too, with a warning.
    public func load(now: Double = Date().timeIntervalSince1970, warn: (String) -> Void) -> DeliveryState {
        let corrupt = "the state file \(path) is unreadable or corrupt; starting clean (activities already on phones get a fresh start)"
        // Non-blocking: a FIFO put in its place since the start must not hang the load.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno != ENOENT { warn(corrupt) }
            return DeliveryState()
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, Self.notRegular(status.st_mode) == nil, Int(status.st_size) <= Self.largestFile else {
            warn(Int(status.st_size) > Self.largestFile ? "the state file \(path) is over \(Self.largestFile) bytes; starting clean" : corrupt)
            return DeliveryState()
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes[count...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        guard count <= Self.largestFile, let state = DeliveryState.decode(Array(bytes[..<count]), now: now, warn: warn) else {
            warn(corrupt)
            return DeliveryState()
        }
        return state
    }

    public func save(_ state: DeliveryState) throws {
        let temporary = directory + "/.state.json.tmp"
        let bytes = state.fileBytes + [0x0A]
        // Created exclusively and never through a link: a file or link planted at the temporary name is not written
        // through. One left by a crash between create and rename is ours to remove (unlink removes a link, not its
        // target).
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        var fd = open(temporary, flags, 0o600)
        if fd < 0, errno == EEXIST, unlink(temporary) == 0 { fd = open(temporary, flags, 0o600) }
        guard fd >= 0 else { throw FileError(description: "cannot write \(temporary): \(Self.reason(errno))") }
        if let failure = bytes.withUnsafeBytes({ writeAll(fd, $0) }) {
            close(fd)
            unlink(temporary)
            throw FileError(description: "cannot write \(temporary): \(Self.reason(failure))")
        }
        guard fsync(fd) == 0 else {
            let problem = Self.reason(errno)
            close(fd)
            unlink(temporary)
            throw FileError(description: "cannot sync \(temporary): \(problem)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let problem = Self.reason(errno)
            unlink(temporary)
            throw FileError(description: "cannot replace \(path): \(problem)")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
