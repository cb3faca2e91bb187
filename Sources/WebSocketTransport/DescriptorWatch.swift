import CLibWebSockets
import Platform

/// A descriptor of another library polled by the loop beside its own sockets: libcurl's sockets, gathered in one
/// epoll set, so that the backends' HTTP runs on the socket's thread and a push wakes no other thread.
///
/// libwebsockets adopts a duplicate of the descriptor as a raw file (it closes what it adopted when it is done with
/// it); the owner keeps and closes its own. Level-triggered: `readable` is called on every pass while the descriptor
/// has something to read, so the owner must drain it.
public final class DescriptorWatch {
    let readable: () -> Void
    let ended: () -> Void
    /// The adopted descriptor's wsi; nil once it is closed.
    var wsi: OpaquePointer?
    /// Whether it is still polled (not unwatched, the loop not ended). On the loop thread.
    public var isWatching: Bool { wsi != nil }

    init(readable: @escaping () -> Void, ended: @escaping () -> Void) {
        self.readable = readable
        self.ended = ended
    }
}

extension WebSocketEventLoop {
    /// Polls `descriptor` for reading with the loop's sockets: `readable` runs on the loop thread whenever it can be
    /// read, `ended` once when the loop stops (not after `unwatch`). Nil when libwebsockets cannot adopt it. Call on
    /// the loop thread.
    public func watch(_ descriptor: Int32, readable: @escaping () -> Void, ended: @escaping () -> Void) -> DescriptorWatch? {
        preconditionInEventLoop()
        guard let vhost = lws_get_vhost_by_name(context, "default") else { return nil }
        let copy = dup(descriptor)
        guard copy >= 0 else { return nil }
        var adopted = lws_sock_file_fd_type()
        adopted.filefd = copy
        guard let wsi = lws_adopt_descriptor_vhost(vhost, LWS_ADOPT_RAW_FILE_DESC, adopted, "livebridge", nil) else {
            close(copy)
            return nil
        }
        let watch = DescriptorWatch(readable: readable, ended: ended)
        watch.wsi = wsi
        watches[wsi] = watch
        return watch
    }

    /// Stops polling: `ended` is not called. Call on the loop thread.
    public func unwatch(_ watch: DescriptorWatch) {
        preconditionInEventLoop()
        guard let wsi = watch.wsi else { return }
        watch.wsi = nil
        watches[wsi] = nil
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }

    /// The watched descriptor can be read.
    func watchedReadable(wsi: OpaquePointer) {
        preconditionInEventLoop()
        watches[wsi]?.readable()
    }

    /// The adopted descriptor was closed (the loop is stopping, or after `unwatch`).
    func watchedClosed(wsi: OpaquePointer) {
        preconditionInEventLoop()
        guard let watch = watches.removeValue(forKey: wsi) else { return }
        watch.wsi = nil
        watch.ended()
    }
}
