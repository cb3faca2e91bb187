import CLibWebSockets
import Platform
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A descriptor of another library polled by the loop beside its own sockets: each hosted HTTP client's epoll set of
/// libcurl's sockets, so that the backends' HTTP runs on the socket's thread and a push
/// wakes no other thread.
///
/// Every watched descriptor of a loop is in one epoll set, which libwebsockets polls as one adopted raw file (a
/// duplicate; it closes what it adopted): a loop's descriptor budget (`Options.maximumConnections`) is spent once,
/// however many clients it hosts. The owner keeps and closes its own descriptor, after `unwatch`. Level-triggered:
/// `readable` is called on every pass while the descriptor has something to read, so the owner must drain it.
public final class DescriptorWatch {
    let descriptor: Int32
    let readable: () -> Void
    let ended: () -> Void
    /// Whether it is still polled (not unwatched, the loop not ended). On the loop thread.
    public fileprivate(set) var isWatching = true

    init(descriptor: Int32, readable: @escaping () -> Void, ended: @escaping () -> Void) {
        self.descriptor = descriptor
        self.readable = readable
        self.ended = ended
    }
}

/// The loop's epoll set of watched descriptors and the wsi libwebsockets polls it as. Confined to the loop thread.
struct WatchSet {
    var set: Int32 = -1
    var wsi: OpaquePointer?
    var watches: [Int32: DescriptorWatch] = [:]
    /// Where `ready` reads the ready descriptors into.
    let ready = ReadyDescriptors()
}

/// Room for 32 ready descriptors, freed with its owner: the loop's own deinit does not run when its init throws
/// (a listener it cannot bind), and the room, made with the loop's first stored properties, then leaked.
final class ReadyDescriptors {
    static let capacity = 32
    let pointer = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
    deinit { pointer.deallocate() }
}

extension WebSocketEventLoop {
    /// Polls `descriptor` for reading with the loop's sockets: `readable` runs on the loop thread whenever it can be
    /// read, `ended` once when the loop stops (not after `unwatch`). Nil when it cannot be watched (no descriptor for
    /// the set, libwebsockets out of room, or the descriptor watched already). Call on the loop thread.
    public func watch(_ descriptor: Int32, readable: @escaping () -> Void, ended: @escaping () -> Void) -> DescriptorWatch? {
        preconditionInEventLoop()
        guard !contextDestroyed, watchSet.watches[descriptor] == nil, openWatchSet(),
              clws_epoll_add(watchSet.set, descriptor) == 0 else { return nil }
        let watch = DescriptorWatch(descriptor: descriptor, readable: readable, ended: ended)
        watchSet.watches[descriptor] = watch
        return watch
    }

    /// Stops polling: `ended` is not called. Call on the loop thread, before closing the descriptor.
    public func unwatch(_ watch: DescriptorWatch) {
        preconditionInEventLoop()
        guard watch.isWatching else { return }
        watch.isWatching = false
        if watchSet.watches[watch.descriptor] === watch {
            watchSet.watches[watch.descriptor] = nil
            _ = clws_epoll_remove(watchSet.set, watch.descriptor)
        }
    }

    /// The set, made and adopted at the first watch; false when it cannot be.
    private func openWatchSet() -> Bool {
        if watchSet.wsi != nil { return true }
        guard let vhost = lws_get_vhost_by_name(context, "default") else { return false }
        let set = clws_epoll_make()
        guard set >= 0 else { return false }
        let copy = dup(set)
        guard copy >= 0 else { close(set); return false }
        var adopted = lws_sock_file_fd_type()
        adopted.filefd = copy
        guard let wsi = lws_adopt_descriptor_vhost(vhost, LWS_ADOPT_RAW_FILE_DESC, adopted, "livebridge", nil) else {
            close(copy)
            close(set)
            return false
        }
        watchSet.set = set
        watchSet.wsi = wsi
        return true
    }

    /// libwebsockets found the set readable: each ready descriptor's reader runs (one unwatched meanwhile is skipped).
    func watchedReadable(wsi: OpaquePointer) -> Bool {
        preconditionInEventLoop()
        if wsi == timerDescriptor.wsi {
            timerDescriptor.drain()
            timerFired()
            return true
        }
        guard wsi == watchSet.wsi else { return false }
        while true {
            let ready = watchSet.ready.pointer
            let count = Int(clws_epoll_ready(watchSet.set, ready, Int32(ReadyDescriptors.capacity)))
            guard count > 0 else { break }
            for i in 0..<count { watchSet.watches[ready[i]]?.readable() }
            if count < ReadyDescriptors.capacity { break }
        }
        return true
    }

    /// The adopted set was closed (the loop is stopping): every watch ends.
    func watchedClosed(wsi: OpaquePointer) {
        preconditionInEventLoop()
        guard wsi == watchSet.wsi else { return }
        watchSet.wsi = nil
        let ending = watchSet.watches.values
        watchSet.watches = [:]
        close(watchSet.set)
        watchSet.set = -1
        for watch in ending {
            watch.isWatching = false
            watch.ended()
        }
    }
}
