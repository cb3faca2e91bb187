import FoundationEssentials
import Platform

/// A rules file `livebridge suggest` wrote is a proposal: it is never run (nor passed by `check`) until the user has
/// read it. Its first line says so and must be deleted; a token still holding suggest's placeholder is refused too,
/// so the placeholder never reaches a real service.
public enum Proposal {
    /// The line `suggest --output` writes first.
    public static let marker = "# LIVEBRIDGE PROPOSAL: read this file, keep what is right, put your tokens in secrets.yaml, then delete this line."

    /// What suggest writes in secrets.yaml for a token it does not know.
    public static func placeholder(for secret: String) -> String { "replace-with-your-" + secret.replacingAll("_", with: "-") }

    /// The error for a file still carrying the marker (nil: none).
    static func markerError(in text: String, file: String) -> ConfigError? {
        var line = 0
        for row in text.split(separator: "\n", omittingEmptySubsequences: false) {
            line += 1
            if row.trimmingWhitespace() == marker {
                return ConfigError(SourceLocation(file: file, line: line, column: 1), path: "",
                                   "this is livebridge suggest's proposal, not yet read: check its activities and backends, then delete this line")
            }
        }
        return nil
    }

    /// Whether a token is suggest's placeholder, not a real one.
    static func isPlaceholder(_ token: String) -> Bool { token.hasPrefix("replace-with-your-") }
}
