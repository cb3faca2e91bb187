/// A place in a configuration file, 1-based, as editors show it.
public struct SourceLocation: Sendable, Hashable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// A mistake in the configuration: where, the path of keys that leads to it, and what is wrong.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    public let location: SourceLocation
    /// Dotted path, e.g. `activities.washer.progress.color`; empty at the top.
    public let path: String
    public let message: String

    public init(_ location: SourceLocation, path: String, _ message: String) {
        self.location = location
        self.path = path
        self.message = message
    }

    public var description: String {
        path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
    }
}

/// Every error found, not only the first.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public let errors: [ConfigError]
    public init(_ errors: [ConfigError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
