/// File paths as text, as NSString's path methods treat them: FoundationEssentials has no NSString.
public enum PathText {
    /// The folder holding `path`: "a/b/c.yaml" → "a/b", "c.yaml" → "", "/c.yaml" → "/".
    public static func directory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var folder = trimmed[..<slash]
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder.isEmpty ? "/" : String(folder)
    }

    /// The file's own name: "a/b/c.yaml" → "c.yaml".
    public static func lastComponent(of path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// `name` inside `directory`, with one slash between them.
    public static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
