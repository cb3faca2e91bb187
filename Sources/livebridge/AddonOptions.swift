import FoundationEssentials
import JSON
import LiveBridge

/// The add-on's options as Home Assistant's Supervisor writes them (`/data/options.json`, checked against the schema in
/// config.yaml): where the rules file is, the log level, dry run. `run --addon-options FILE` reads them; flags given
/// on the command line win.
struct AddonOptions: Equatable {
    var rules = "/config/livebridge.yaml"
    var logLevel = "info"
    var dryRun = false

    struct InvalidError: Error, CustomStringConvertible {
        let description: String
    }

    init(rules: String = "/config/livebridge.yaml", logLevel: String = "info", dryRun: Bool = false) {
        (self.rules, self.logLevel, self.dryRun) = (rules, logLevel, dryRun)
    }

    /// Reads `path`; an absent option keeps its default, a wrong one says which and why.
    init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else { throw InvalidError(description: "cannot read \(path)") }
        guard case .object(let options)? = try? JSONParser.parse(Array(data)) else {
            throw InvalidError(description: "\(path): not a JSON object (the Supervisor writes the add-on's options there)")
        }
        self.init()
        if let value = options["rules"] {
            guard let text = value.stringValue, text.hasPrefix("/") else { throw InvalidError(description: "\(path): rules must be an absolute path, not \(value.jsonText)") }
            rules = text
        }
        if let value = options["log_level"] {
            guard let text = value.stringValue, Logger.Level(name: text) != nil else {
                throw InvalidError(description: "\(path): log_level must be debug, info, warning or error, not \(value.jsonText)")
            }
            logLevel = text
        }
        if let value = options["dry_run"] {
            guard case .bool(let flag) = value else { throw InvalidError(description: "\(path): dry_run must be true or false, not \(value.jsonText)") }
            dryRun = flag
        }
    }
}
