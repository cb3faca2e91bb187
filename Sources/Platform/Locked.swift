#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A value only reached under a lock.
///
/// Normally Swift's `Mutex`. Built with `-D LIVEBRIDGE_PTHREAD_LOCK` (`make sanitize` does) it is a pthread mutex
/// instead: ThreadSanitizer does not see `Mutex`'s futex on Linux, so every value behind one would be reported as a
/// race; it does see pthread mutexes, so what it reports in that build is real.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    #if LIVEBRIDGE_PTHREAD_LOCK
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
    #else
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { value throws -> Result in try body(&value) }
    }
    #endif
}
