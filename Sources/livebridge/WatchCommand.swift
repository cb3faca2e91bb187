import Platform
import FoundationEssentials
import Glibc
import HomeAssistant
import JSON
import Rules

/// `livebridge watch --url URL --token-file FILE ENTITY_ID…`: one JSON line per state change, starting with
/// each entity's current state; connection events on stderr. Runs until interrupted or the token is rejected.
enum WatchCommand {
    static let help = """
        usage: livebridge watch --url URL (--token-file FILE | env LIVEBRIDGE_HA_TOKEN) ENTITY_ID...

          --url URL            Home Assistant: ws(s)://host:8123/api/websocket or http(s)://host:8123
          --token-file FILE    a file holding a long-lived access token (else $LIVEBRIDGE_HA_TOKEN)
          --ca-file FILE       trust this CA (PEM) instead of the system store
          --allow-self-signed  accept a self-signed certificate (only for your own server)
          --max-message-size N largest message accepted, in bytes (default 67108864)

        Prints {"entity_id":…,"state":…,"attributes":{…},"last_changed":…,"last_updated":…} per change;
        a removed entity prints {"entity_id":…,"state":null}.
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["url", "token-file", "ca-file", "max-message-size"],
                                    flags: ["allow-self-signed"])
        guard let url = args["url"] else { throw UsageError("--url is required\n\n\(help)") }
        guard !args.positional.isEmpty else { throw UsageError("name at least one entity id, e.g. sensor.washer_progress") }
        for id in args.positional where !EntityID.isValid(id) {
            throw UsageError("\"\(id)\" is not an entity id (expected domain.object_id, e.g. sensor.washer_progress)")
        }
        let token = try readToken(file: args["token-file"])
        var configuration = try ConnectionConfiguration(url: url, token: token, caFile: args["ca-file"],
                                                        allowSelfSigned: args.has("allow-self-signed"))
        if let size = args["max-message-size"] {
            guard let bytes = Int(size), bytes >= 1024 else { throw UsageError("--max-message-size must be a number of bytes ≥ 1024") }
            configuration.maximumMessageSize = bytes
        }

        let connection = try HomeAssistantConnection(configuration: configuration) { event in
            standardError("livebridge watch: \(event)")
        }
        // The first signal stops the connection (the output ends with the feed); a second exits at once.
        let signals = UnixSignals([.interrupt, .terminate])
        let stop = AsyncStream.makeStream(of: Void.self)
        let selection = EntitySelection(entityIDs: args.positional)
        // The feed ends with the connection: stopped by a signal, or the token rejected (exit 1), as it is then.
        let rejected = await withDiscardingTaskGroup(returning: Bool.self) { group in
            group.addTask {
                var stops = 0
                for await _ in signals {
                    stops += 1
                    if stops == 1 { stop.continuation.yield() } else { exit(130) }
                }
            }
            // The connection runs until the first stop (or until the feed ends: a rejected token).
            group.addTask {
                await withDiscardingTaskGroup { running in
                    running.addTask { await connection.run(selection: selection) }
                    for await _ in stop.stream { break }
                    running.cancelAll()
                }
            }
            while let batch = await connection.changes.next() {
                var out = ""
                for change in batch {
                    switch change {
                    case .updated(let state): out += state.jsonLine + "\n"
                    case .removed(let id):
                        var line = "{\"entity_id\":"
                        JSONValue.writeString(id, to: &line)
                        out += line + ",\"state\":null}\n"
                    case .changed:
                        // Only a connection that lends its states sends these; this one does not.
                        break
                    }
                }
                standardOutput(out)
            }
            let rejected = connection.currentPhase == .rejected
            group.cancelAll()
            return rejected
        }
        return rejected ? 1 : 0
    }

    static func readToken(file: String?) throws -> AccessToken {
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw UsageError("cannot read the token file \(file)")
            }
            let token = AccessToken(text)
            guard !token.isEmpty else { throw UsageError("the token file \(file) is empty") }
            if let warning = SecretFilePermissions.warning(for: file, holding: "an access token") { standardError("warning: " + warning) }
            return token
        }
        if let text = ProcessInfo.processInfo.environment["LIVEBRIDGE_HA_TOKEN"], !AccessToken(text).isEmpty {
            return AccessToken(text)
        }
        throw UsageError("give --token-file FILE or set LIVEBRIDGE_HA_TOKEN to a long-lived access token")
    }
}
