#if canImport(Glibc)
import Glibc
#endif

/// glibc gives threads that allocate at once arenas of their own (up to 8 per core), each keeping its own free pages.
/// The daemon's threads mostly hand data along, so one arena holds less slack: −2.3 MiB with 5,000 entities, no
/// measurable CPU cost under the flood (`make bench`). `mallopt(M_ARENA_MAX)`, looked up at run time (absent on musl);
/// `MALLOC_ARENA_MAX` in the environment still decides when set.
public enum HeapArenas {
    private static let arenaMaximum: Int32 = -8  // M_ARENA_MAX in malloc.h

    /// Call first thing in `main`: glibc reads the limit once, when it makes the first arena for a second thread.
    /// True when the limit is set.
    @discardableResult
    public static func limit(to count: Int32) -> Bool {
        guard getenv("MALLOC_ARENA_MAX") == nil,
              let mallopt = CLibrarySymbol.function("mallopt", as: (@convention(c) (Int32, Int32) -> Int32).self) else { return false }
        return mallopt(arenaMaximum, count) == 1
    }
}
