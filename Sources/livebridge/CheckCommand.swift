import FoundationEssentials
import Glibc
import Preview
import Rules

/// `livebridge check [--verbose] CONFIG`: every error with file:line:column, exit 1; or a one-line summary and the
/// warnings, exit 0.
enum CheckCommand {
    static let help = """
        usage: livebridge check [--verbose] [--url URL [--token-file FILE]] CONFIG

        Validates a rules file and prints every error with file:line:column. A file that loads may still get
        warnings: what the phone will not show as written (an mdi: icon with no SF Symbol, a bar on Island Pulse's
        free tier). --verbose also lists every coercion LiveBridge applies on the way to a backend (an Aivi template
        shown as an Island Pulse layout or a Home Assistant live update, an mdi: icon drawn as an SF Symbol…).
        With --url (and --token-file or $LIVEBRIDGE_HA_TOKEN), or inside the add-on, it also asks Home Assistant
        whether each homeassistant target's notify service exists and its phone is an iPhone (what the daemon warns
        of at start-up).
        """

    static func run(_ arguments: [String]) async throws -> Int32 {
        let args = try ArgumentList(arguments, valued: ["url", "token-file"], flags: ["verbose"])
        guard args.positional.count == 1 else { throw UsageError("name one rules file\n\n\(help)") }
        switch RulesLoader.load(file: args.positional[0]).flatMap({ rules in
            rules.problemsForRun.isEmpty ? .success(rules) : .failure(ConfigErrors(rules.problemsForRun))
        }) {
        case .failure(let errors):
            for error in errors.errors { standardError(error.description) }
            for warning in SecretFilePermissions.warnings(configPath: args.positional[0]) { standardError("warning: \(warning)") }
            standardError("\(errors.errors.count) error\(errors.errors.count == 1 ? "" : "s")")
            return 1
        case .success(let rules):
            let backends = Set(rules.activities.flatMap { $0.targets.map(\.backend.name) }).count
            print("\(rules.path): OK — \(rules.activities.count) activit\(rules.activities.count == 1 ? "y" : "ies"), "
                + "\(rules.entityIDs.count) entit\(rules.entityIDs.count == 1 ? "y" : "ies"), \(rules.backends.count) backend\(rules.backends.count == 1 ? "" : "s") (\(backends) in use)")
            if let settings = rules.homeAssistant, settings.throughSupervisor {
                print("Home Assistant: \(settings.url), through the Supervisor with the add-on's token ($\(SupervisorAccess.tokenVariable))")
            }
            for warning in rules.notes.warnings.sortedByPosition() { print("\(warning.location): \(warning.path): warning: \(warning.message)") }
            for warning in SecretFilePermissions.warnings(configPath: args.positional[0]) { print("warning: \(warning)") }
            if args.has("verbose") {
                for coercion in rules.notes.coercions.sortedByPosition() { print("\(coercion.location): \(coercion.path): \(coercion.message)") }
            }
            for note in Self.iconsWithoutDrawing(path: args.positional[0]) { print(note) }
            // The fields LiveBridge cannot evaluate itself: Home Assistant renders them while running.
            for rule in rules.activities {
                for field in rule.fieldsRenderedByHomeAssistant {
                    print("\(field.location): \(field.path): rendered by Home Assistant (\(field.reason))")
                }
            }
            if args["url"] != nil, LiveActivityDismissal.isFollowed(by: rules), let target = try HomeAssistantTarget.from(args) {
                for warning in try await target.liveActivityPreconditions(rules) { print("warning: \(warning)") }
            }
            return 0
        }
    }

    /// The icons written as SF Symbol names (or mdi: icons drawn as one) that the preview page has no drawing for:
    /// it shows their initial there, while the phone draws the symbol. Said so a user does not take the disc for a bug.
    static func iconsWithoutDrawing(path: String) -> [String] {
        var loader = YAMLLoader(environment: [:], secretsOptional: true)
        guard case .mapping(let top)? = loader.load(file: path).0?.kind,
              case .mapping(let activities)? = top.first(where: { $0.key.scalar == "activities" })?.value.kind else { return [] }
        var notes: [String] = []
        for (id, activity) in activities {
            guard case .mapping(let fields) = activity.kind, let icon = fields.first(where: { $0.key.scalar == "icon" })?.value,
                  let written = icon.scalar, written != "auto", !written.contains("{{") else { continue }
            let symbol = written.hasPrefix("mdi:") ? IconCatalog.symbol(forMDI: written) : written
            guard let symbol, !PreviewRenderer.drawsSymbol(symbol) else { continue }
            notes.append("\(icon.location): activities.\(id.scalar ?? "?").icon: note: the preview has no drawing of \"\(symbol)\" "
                         + "and shows its initial; the phone draws the SF Symbol")
        }
        return notes
    }
}
