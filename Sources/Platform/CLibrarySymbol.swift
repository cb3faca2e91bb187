#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A C library function looked up at run time (`dlsym(RTLD_DEFAULT, …)`): for GNU extensions Swift's Glibc module
/// leaves out (malloc_trim, mallopt, pthread_setname_np). Nil where the C library has no such function (musl).
enum CLibrarySymbol {
    static func function<F>(_ name: String, as type: F.Type) -> F? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }  // RTLD_DEFAULT
        return unsafeBitCast(symbol, to: type)
    }
}
