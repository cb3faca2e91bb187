/// Something wrong with a payload field: the path to it (`progress.segments[2].fill_color`) and what.
public struct PayloadIssue: Error, Sendable, Hashable, CustomStringConvertible {
    public let path: String
    public let message: String

    public init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }
