import CLibWebSockets
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The event loop's timers as one timerfd polled with its sockets: the loop wakes when the first is due, to the
/// microsecond, and not before. libwebsockets adopts the timerfd itself as a raw file and closes it with its context:
/// one descriptor per loop (a test process runs hundreds of loops at once, and Foundation's `Process.run` crashed
/// copying a list of some 1,800 open descriptors). Confined to the loop's thread.
struct TimerDescriptor {
    private var descriptor: Int32 = -1
    /// The timerfd's wsi in libwebsockets; nil without one.
    private(set) var wsi: OpaquePointer?

    var isOpen: Bool { wsi != nil }

    /// Whether `openOnce` was called.
    private var tried = false

    /// Makes the timerfd and has libwebsockets adopt it, the first time only; on failure the loop keeps libwebsockets'
    /// timer.
    mutating func openOnce(context: OpaquePointer) {
        guard !tried else { return }
        tried = true
        let made = clws_timerfd_make()
        guard made >= 0 else { return }
        var adopted = lws_sock_file_fd_type()
        adopted.filefd = made
        guard let vhost = lws_get_vhost_by_name(context, "default"),
              let wsi = lws_adopt_descriptor_vhost(vhost, LWS_ADOPT_RAW_FILE_DESC, adopted, "livebridge", nil) else {
            _ = close(made)
            return
        }
        descriptor = made
        self.wsi = wsi
    }

    /// The timerfd went off: emptied, so that it is not seen again until it is armed again.
    func drain() { clws_timerfd_drain(descriptor) }

    /// Fires after `delay` (at once if it is past); false when there is no timerfd.
    func arm(after delay: Duration) -> Bool {
        guard isOpen else { return false }
        let (seconds, attoseconds) = delay.components
        // Both 0 would disarm it: a due timer fires after a nanosecond instead.
        guard seconds > 0 || (seconds == 0 && attoseconds >= 1_000_000_000) else { return clws_timerfd_arm(descriptor, 0, 1) == 0 }
        return clws_timerfd_arm(descriptor, Int(seconds), Int(attoseconds / 1_000_000_000)) == 0
    }

    func disarm() {
        guard isOpen else { return }
        _ = clws_timerfd_arm(descriptor, 0, 0)
    }

    /// The loop's context is gone, and the timerfd with it (libwebsockets closed it).
    mutating func end() {
        descriptor = -1
        wsi = nil
    }
}
