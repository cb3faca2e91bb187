#if canImport(Glibc)
import Glibc
#endif

/// The main thread's part once the program's work runs on other threads.
public enum MainThread {
    /// Sleeps until the process exits. The thread takes no signals, so they reach the dispatch sources that handle
    /// them, as they do when `dispatch_main` ends the main thread. Parking instead of ending it spares the forced
    /// unwind `pthread_exit` performs, which reads ~460 KiB of unwind tables into memory at every start.
    public static func park() -> Never {
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)
        while true { pause() }
    }
}
