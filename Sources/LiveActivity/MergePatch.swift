public import JSON

/// RFC 7396 JSON merge patch, as PushWard's `PATCH /activities/{slug}` applies it: a member present overwrites,
/// `null` removes, an absent member is kept from before. So a frame that drops a field must send it as `null`, or
/// the phone keeps showing it.
public enum MergePatch {
    /// `target` with `patch` applied.
    public static func apply(_ patch: JSONValue, to target: JSONValue?) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var result = target?.objectValue ?? [:]
        for (key, value) in changes {
            if value == .null { result[key] = nil } else { result[key] = apply(value, to: result[key]) }
        }
        return .object(result)
    }

    /// `next` as a patch over `previous`: members `previous` had and `next` lacks become `null` (in nested objects
    /// too), so applying it to `previous` gives exactly `next`.
    public static func replacing(_ previous: JSONValue?, with next: JSONValue) -> JSONValue {
        guard case .object(var members) = next, case .object(let before)? = previous else { return next }
        for (key, old) in before {
            if let new = members[key] {
                if case .object = new, case .object = old { members[key] = replacing(old, with: new) }
            } else {
                members[key] = .null
            }
        }
        return .object(members)
    }
}
