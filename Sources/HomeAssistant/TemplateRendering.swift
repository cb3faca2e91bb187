public import JSON

/// What Home Assistant rendered for a template through `render_template`: the result with Home Assistant's native
/// types (a number stays a number), or why it could not.
public enum TemplateRendering: Sendable, Equatable {
    /// The result, and its text as Home Assistant sent it when known: a dict in it keeps the order of its keys there
    /// (Python's), which the decoded value does not.
    case result(JSONValue, text: JSONText? = nil)
    case failure(String)

    /// One event of a `render_template` subscription: `{"result": …, "listeners": …}` or, with `report_errors`,
    /// `{"error": …, "level": "ERROR"}`; nil for a warning (the render still gives a result).
    init?(event: JSONValue) {
        if let result = event["result"] { self = .result(result); return }
        guard let message = event["error"]?.stringValue, event["level"]?.stringValue != "WARNING" else { return nil }
        self = .failure(message)
    }

    /// The same from the event's text, keeping the result's own text.
    init?(event text: JSONText) throws {
        var resultBytes: ArraySlice<UInt8>?
        try text.checked().read { reader in
            guard reader.nextKind == .object else { try reader.skipValue(); return }
            try reader.readMembers { reader, key in
                guard key == "result" else { try reader.skipValue(); return }
                let range = try reader.skipValueRange()
                resultBytes = text.bytes[(text.bytes.startIndex + range.lowerBound)..<(text.bytes.startIndex + range.upperBound)]
            }
        }
        if let resultBytes {
            // Copied out of the frame: kept as the latest rendering, a slice would hold the whole frame (up to 64 MiB).
            let resultText = JSONText(checked: ArraySlice(Array(resultBytes)))
            self = .result(try resultText.value(), text: resultText)
            return
        }
        self.init(event: try text.value())
    }

    /// Results are equal when their values are, whichever text they came in.
    public static func == (lhs: TemplateRendering, rhs: TemplateRendering) -> Bool {
        switch (lhs, rhs) {
        case (.result(let a, _), .result(let b, _)): a == b
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }

    /// The same with `token` masked in a failure's text, which is Home Assistant's (a hostile server's) and is logged.
    func redacting(_ token: AccessToken) -> TemplateRendering {
        if case .failure(let message) = self { return .failure(token.masking(in: message)) }
        return self
    }

    /// Why Home Assistant refused the subscription itself.
    init(refusal error: HomeAssistantError) {
        self = .failure(error.code == .unauthorized
            ? "render_template needs an administrator's token, and the token LiveBridge uses is not one: create one as an administrator"
            : "Home Assistant refused to render it: \(error.code): \(error.message)")
    }
}
