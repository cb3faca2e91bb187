#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A POSIX thread running one closure to its end: what the daemon needs of Foundation's `Thread`, without linking
/// Foundation's full module (and with it ICU's 30 MiB) into the binary.
public enum DetachedThread {
    /// Starts `body` on a new detached thread, named (for `top -H` and debuggers; the system keeps 15 bytes) and with
    /// `stackSize` bytes of stack when given. A thread the system cannot create is a fatal error, as with `Thread`.
    public static func start(name: String? = nil, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            fatalError("pthread_create failed: \(result)")
        }
        if let name, let setName { _ = setName(thread, String(name.utf8.prefix(15))!) }
        pthread_detach(thread)
    }

    /// glibc's pthread_setname_np, which Swift's Glibc module leaves out (it is a GNU extension); absent on others.
    private static let setName = CLibrarySymbol.function("pthread_setname_np",
                                                         as: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
