#if canImport(Glibc)
import Glibc
#endif

/// Gives the heap's free pages back to the system after a large, short-lived allocation (a snapshot's parse tree),
/// so a daemon that ran for months does not sit on its biggest moment. glibc's `malloc_trim`, looked up at run time:
/// a C library without it (musl) simply keeps its pages.
public enum FreedMemory {
    private static let trim = CLibrarySymbol.function("malloc_trim", as: (@convention(c) (Int) -> Int32).self)

    public static func release() { _ = trim?(0) }

    /// A batch of changes this large was a snapshot (or a flood): worth a trim once it is processed.
    public static let largeBatch = 1024
}
