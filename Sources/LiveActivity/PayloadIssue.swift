/// Something wrong with a payload field: the path to it (`progress.segments[2].fill_color`) and what.
public struct PayloadIssue: Sendable, Hashable, CustomStringConvertible {
    public let path: String
    public let message: String

    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// A key's path under `path` as messages show it: `activities.washer.progress`; an empty key is the path itself.
public func joinedPath(_ path: String, _ key: String) -> String {
    key.isEmpty ? path : (path.isEmpty ? key : path + "." + key)
}
