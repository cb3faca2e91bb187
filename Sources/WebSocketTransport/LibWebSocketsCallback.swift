import CLibWebSockets

/// The one callback libwebsockets calls, on the loop thread: routes each event to its loop and connection.
func webSocketCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                       _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi else { return 0 }
    let connection = lws_get_opaque_user_data(wsi).map {
        Unmanaged<WebSocketConnection>.fromOpaque($0).takeUnretainedValue()
    }
    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        loop(of: wsi)?.runPending()
        return 0

    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        connection?.established(wsi: wsi)
        return 0

    case LWS_CALLBACK_ESTABLISHED:
        _ = loop(of: wsi)?.accepted(wsi: wsi)
        return 0

    case LWS_CALLBACK_CLIENT_RECEIVE, LWS_CALLBACK_RECEIVE:
        guard let connection else { return 0 }
        let chunk = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        return connection.received(chunk, wsi: wsi) ? 0 : -1

    case LWS_CALLBACK_CLIENT_WRITEABLE, LWS_CALLBACK_SERVER_WRITEABLE:
        guard let connection else { return 0 }
        return connection.writeable(wsi: wsi) ? 0 : -1

    case LWS_CALLBACK_RAW_CONNECTED:
        connection?.rawConnected(wsi: wsi)
        return 0

    case LWS_CALLBACK_RAW_RX:
        guard let connection else { return 0 }
        return connection.rawReceived(UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length), wsi: wsi) ? 0 : -1

    case LWS_CALLBACK_RAW_WRITEABLE:
        guard let connection else { return 0 }
        return connection.rawWriteable(wsi: wsi) ? 0 : -1

    case LWS_CALLBACK_RAW_CLOSE:
        connection?.finish(.closed)
        return 0

    case LWS_CALLBACK_RAW_RX_FILE:
        _ = loop(of: wsi)?.watchedReadable(wsi: wsi)
        return 0

    case LWS_CALLBACK_RAW_CLOSE_FILE:
        loop(of: wsi)?.watchedClosed(wsi: wsi)
        return 0

    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        let why = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "unknown error"
        connection?.finish(.connectFailed(why))
        return 0

    case LWS_CALLBACK_CLIENT_CLOSED, LWS_CALLBACK_CLOSED:
        connection?.finish(.closed)
        return 0

    case LWS_CALLBACK_WSI_DESTROY:
        connection?.finish(.closed)
        loop(of: wsi)?.httpClosed(wsi: wsi)
        loop(of: wsi)?.connectionGone(wsi: wsi)
        return 0

    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        // `input` is the new socket's descriptor; `wsi` is still the listener's.
        return loop(of: wsi)?.admit(socket: Int32(truncatingIfNeeded: Int(bitPattern: input))) == false ? 1 : 0

    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
        // The accepted socket's own wsi, its descriptor set: before any of its bytes is read.
        loop(of: wsi)?.connectionSeen(wsi: wsi)
        return 0

    case LWS_CALLBACK_HTTP:
        let uri = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
        loop(of: wsi)?.httpBegan(wsi: wsi, uri: uri)
        return 0

    case LWS_CALLBACK_HTTP_BODY:
        guard let input else { return 0 }
        return loop(of: wsi)?.httpBody(wsi: wsi, UnsafeRawBufferPointer(start: input, count: length)) == false ? -1 : 0

    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        // A WebSocket upgrade to a listener that takes none (the status page) is refused.
        return loop(of: wsi)?.acceptsWebSockets == false ? 1 : 0

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        loop(of: wsi)?.httpBodyComplete(wsi: wsi)
        return 0

    case LWS_CALLBACK_HTTP_WRITEABLE:
        return loop(of: wsi)?.httpWriteable(wsi: wsi) == false ? -1 : 0

    case LWS_CALLBACK_CLOSED_HTTP:
        loop(of: wsi)?.httpClosed(wsi: wsi)
        return 0

    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

private func loop(of wsi: OpaquePointer) -> WebSocketEventLoop? {
    guard let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return nil }
    // The context's user is the loop's OwnerBox; its loop is nil only during lws_create_context.
    return Unmanaged<WebSocketEventLoop.OwnerBox>.fromOpaque(owner).takeUnretainedValue().loop
}
