// Public: `withLock` is inlinable, and the lock it takes is Glibc's in one build and Synchronization's in the other.
#if LIVEBRIDGE_PTHREAD_LOCK
#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
public import Musl
#endif
#else
public import Synchronization
#endif

/// A value only reached under a lock.
///
/// Normally Swift's `Mutex`. Built with `-D LIVEBRIDGE_PTHREAD_LOCK` (`make sanitize` does) it is a pthread mutex
/// instead: ThreadSanitizer does not see `Mutex`'s futex on Linux, so every value behind one would be reported as a
/// race; it does see pthread mutexes, so what it reports in that build is real.
public final class Locked<Value: Sendable>: @unchecked Sendable {
    // Inlinable, so that each caller's use is specialized: unspecialized, every call looked up the generic lock's
    // type metadata at run time (about 0.5 % of a flood's samples: the feed of changes, the metrics).
    #if LIVEBRIDGE_PTHREAD_LOCK
    @usableFromInline var value: Value
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
    #else
    @usableFromInline let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    @inlinable
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { value throws -> Result in try body(&value) }
    }
    #endif
}
