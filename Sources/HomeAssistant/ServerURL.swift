import FoundationEssentials
public import WebSocketTransport
import Platform

/// Turns what a user writes for their Home Assistant into the WebSocket endpoint to dial.
///
/// `ws://` and `wss://` are taken as they are; a bare `http(s)://host:8123` base gets `/api/websocket`.
public enum ServerURL {
    public struct ParseError: Error, Equatable, CustomStringConvertible, Sendable {
        public let url: String
        public let reason: String
        public var description: String { "invalid Home Assistant URL \"\(url)\": \(reason)" }
    }

    public static func endpoint(from text: String, caFile: String? = nil, allowSelfSigned: Bool = false) throws -> WebSocketEndpoint {
        let trimmed = text.trimmingSpaces()
        guard let schemeEnd = trimmed.firstRange(ofText: "://") else {
            throw ParseError(url: text, reason: "expected ws://, wss://, http:// or https://")
        }
        let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
        let secure: Bool
        let isHTTP: Bool
        switch scheme {
        case "ws": (secure, isHTTP) = (false, false)
        case "wss": (secure, isHTTP) = (true, false)
        case "http": (secure, isHTTP) = (false, true)
        case "https": (secure, isHTTP) = (true, true)
        default: throw ParseError(url: text, reason: "unsupported scheme \"\(scheme)\"; expected ws, wss, http or https")
        }
        var rest = trimmed[schemeEnd.upperBound...]
        if let query = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<query] }
        let authority: Substring
        var path: String
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = String(rest[slash...])
        } else {
            authority = rest
            path = ""
        }
        guard !authority.contains("@") else { throw ParseError(url: text, reason: "credentials in the URL are not supported; use a token") }
        let (host, port) = try hostAndPort(authority, defaultPort: secure ? 443 : 80, url: text)
        if isHTTP || path.isEmpty || path == "/" {
            while path.hasSuffix("/") { path.removeLast() }
            if !path.hasSuffix("/api/websocket") { path += "/api/websocket" }
        }
        let security: WebSocketEndpoint.Security = secure ? .tls(caFile: caFile, allowSelfSigned: allowSelfSigned) : .plain
        return WebSocketEndpoint(host: host, port: port, path: path, security: security)
    }

    private static func hostAndPort(_ authority: Substring, defaultPort: Int, url: String) throws -> (String, Int) {
        var host = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw ParseError(url: url, reason: "unclosed IPv6 address") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty {
                throw ParseError(url: url, reason: "unexpected text after the address")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { throw ParseError(url: url, reason: "no host") }
        guard let portText else { return (String(host), defaultPort) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw ParseError(url: url, reason: "port \"\(portText)\" is not a number from 1 to 65535")
        }
        return (String(host), port)
    }
}

