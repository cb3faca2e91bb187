@testable import HomeAssistant
import Testing
import WebSocketTransport

struct ServerURLTests {
    @Test func aWebSocketURLIsTakenAsItIs() throws {
        #expect(try ServerURL.endpoint(from: "ws://homeassistant.local:8123/api/websocket")
                == WebSocketEndpoint(host: "homeassistant.local", port: 8123, path: "/api/websocket"))
    }

    @Test func aBareHTTPBaseIsCompleted() throws {
        #expect(try ServerURL.endpoint(from: "http://homeassistant.local:8123")
                == WebSocketEndpoint(host: "homeassistant.local", port: 8123, path: "/api/websocket"))
        #expect(try ServerURL.endpoint(from: "http://10.0.0.2:8123/").path == "/api/websocket")
        #expect(try ServerURL.endpoint(from: "ws://10.0.0.2:8123").path == "/api/websocket")
    }

    @Test func httpsAndWSSUseTLSWithDefaultPortsAndOptIns() throws {
        let https = try ServerURL.endpoint(from: "https://ha.example.com")
        #expect(https.port == 443)
        #expect(https.security == .tls(caFile: nil, allowSelfSigned: false))
        let wss = try ServerURL.endpoint(from: "wss://ha.example.com:8443/api/websocket", caFile: "/etc/ca.pem", allowSelfSigned: true)
        #expect(wss.security == .tls(caFile: "/etc/ca.pem", allowSelfSigned: true))
        #expect(try ServerURL.endpoint(from: "http://ha").port == 80)
    }

    @Test func ipv6AddressesKeepTheirPort() throws {
        let endpoint = try ServerURL.endpoint(from: "http://[fd00::2]:8123")
        #expect(endpoint.host == "fd00::2")
        #expect(endpoint.port == 8123)
    }

    @Test func badURLsSayWhatIsWrong() {
        #expect(throws: ServerURL.ParseError(url: "homeassistant.local:8123", reason: "expected ws://, wss://, http:// or https://")) {
            try ServerURL.endpoint(from: "homeassistant.local:8123")
        }
        #expect(throws: ServerURL.ParseError(url: "ftp://x", reason: "unsupported scheme \"ftp\"; expected ws, wss, http or https")) {
            try ServerURL.endpoint(from: "ftp://x")
        }
        #expect(throws: ServerURL.ParseError(url: "http://ha:99999", reason: "port \"99999\" is not a number from 1 to 65535")) {
            try ServerURL.endpoint(from: "http://ha:99999")
        }
        #expect(throws: ServerURL.ParseError.self) { try ServerURL.endpoint(from: "http://:8123") }
    }
}
