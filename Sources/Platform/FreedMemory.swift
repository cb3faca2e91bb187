#if canImport(Glibc)
import Glibc
#endif

/// Gives the heap's free pages back to the system after a large, short-lived allocation (a snapshot's parse tree),
/// so a daemon that ran for months does not sit on its biggest moment. glibc's `malloc_trim`, looked up at run time:
/// a C library without it (musl) simply keeps its pages.
public enum FreedMemory {
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let trim: Trim? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }  // RTLD_DEFAULT
        return unsafeBitCast(symbol, to: Trim.self)
    }()

    public static func release() { _ = trim?(0) }

    /// A batch of changes this large was a snapshot (or a flood): worth a trim once it is processed.
    public static let largeBatch = 1024
}
