import CLibWebSockets
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The event loop's timers as one timerfd polled with its sockets (`WebSocketEventLoop.watch`): the loop wakes when the
/// first is due, to the microsecond, and not before. Confined to the loop's thread.
struct TimerDescriptor {
    private var descriptor: Int32 = -1
    private var watch: DescriptorWatch?

    var isOpen: Bool { watch != nil }

    /// Makes the timerfd and has `loop` poll it; on failure the loop keeps libwebsockets' timer.
    mutating func open(on loop: WebSocketEventLoop) {
        let made = clws_timerfd_make()
        guard made >= 0 else { return }
        guard let watch = loop.watch(made, readable: { [weak loop, made] in
            clws_timerfd_drain(made)
            loop?.timerFired()
        }, ended: {}) else {
            _ = close(made)
            return
        }
        descriptor = made
        self.watch = watch
    }

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

    /// After the loop's context is gone (its watch with it).
    mutating func end() {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = -1
        watch = nil
    }
}
