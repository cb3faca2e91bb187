/// Home Assistant entity ids: `domain.object_id`, lower-case letters, digits and underscores.
public enum EntityID {
    public static func isValid(_ id: String) -> Bool {
        let parts = id.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && !part.hasPrefix("_") && !part.hasSuffix("_")
                && part.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        }
    }
}
