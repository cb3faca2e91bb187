import Platform

/// What each backend takes as an activity's id, a request's target and its method: one grammar, checked where ids
/// come in (the rules, Home Assistant's events) and where saved requests come back (`state.json`), so nothing from
/// outside turns into another path, another host or a second request.
extension BackendKind {
    /// The most characters of an id at any backend (Home Assistant's tag: 64).
    static let longestID = 128

    /// Why `id` cannot name an activity here (nil: it can). Ids that become a path (Aivi's and PushWard's slug,
    /// ActivitySmith's stream key), a job id or a tag are letters, digits, `_` and `-`.
    public func idProblem(_ id: String) -> String? { definition.idProblem(id) }

    /// The methods of this backend's requests (Home Assistant's is its `call_service`).
    public var methods: Set<String> { definition.methods }

    /// Why `target` is not one of this backend's request targets: the path its requests take (`/activity/{slug}`…),
    /// or for Home Assistant a notify service.
    public func targetProblem(_ target: String) -> String? { definition.targetProblem(target) }

    /// Why `target` cannot follow a service's base URL (nil: it can): `/` and segments of letters, digits, `_` and
    /// `-`, nothing that could name another host (`@`), a fragment, a query, a parent or a second request line.
    /// Checked at the HTTP edge whatever the target's source.
    /// By bytes, once a push: every allowed byte is ASCII, so a byte beyond it fails as its scalar would, and 512
    /// bytes of an accepted path are 512 scalars.
    public static func pathProblem(_ target: String) -> String? {
        var segment = -1  // the bytes of the segment so far; -1 before the leading `/`
        var length = 0
        for byte in target.utf8 {
            length += 1
            if byte == UInt8(ascii: "/") {
                guard segment != 0 else { return pathNotAllowed(target) }
                segment = 0
            } else if segment >= 0, byte < 0x80, isSlugScalar(Unicode.Scalar(byte)) {
                segment += 1
            } else {
                return pathNotAllowed(target)
            }
        }
        guard segment > 0, length <= 512 else { return pathNotAllowed(target) }
        return nil
    }

    private static func pathNotAllowed(_ target: String) -> String { "\(shown(target)) is not a request path" }

    static func isSlugScalar(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    static func shown(_ text: String) -> String { OutsideText.quoted(text) }
}
