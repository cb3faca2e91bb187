import Platform
import PreviewServer
import FoundationEssentials
import Glibc

/// `livebridge preview-server [--port 8099] [--listen HOST]`: the demo's preview backend on its own. Point a real rules
/// file's backends at it (`base_url: http://127.0.0.1:8099`) to see what would be pushed before spending real pushes.
enum PreviewServerCommand {
    static var help: String { """
        usage: livebridge preview-server [--port 8099] [--listen 127.0.0.1]

        Accepts the services' contracts with any token and shows every activity at http://HOST:PORT, live. Set
        base_url on your backends to this address.
        \(PreviewServer.contracts)
        """
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["port", "listen"])
        guard let port = Int(args["port"] ?? "8099"), (0...65535).contains(port) else { throw UsageError("--port must be 0–65535") }
        let host = args["listen"] ?? "127.0.0.1"
        let server = try PreviewServer(port: port, host: host)
        standardOutput("LiveBridge preview server: http://\(host):\(server.baseURL.split(separator: ":").last ?? "") (Ctrl-C stops)\n")
        for await _ in UnixSignals([.terminate, .interrupt]) { break }
        server.stop()
        return 0
    }
}
