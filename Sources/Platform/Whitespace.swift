/// Trimming as Foundation's `CharacterSet.whitespaces` / `.whitespacesAndNewlines` do, by Unicode property:
/// FoundationEssentials has no `trimmingCharacters(in:)`.
extension StringProtocol {
    /// Without leading and trailing spaces and tabs (Unicode Zs and U+0009); newlines stay.
    public func trimmingSpaces() -> String { trimming { $0.isSpaceOrTab } }

    /// Without leading and trailing spaces, tabs and line breaks.
    public func trimmingWhitespace() -> String { trimming { $0.isSpaceOrTab || $0.isLineBreak } }

    private func trimming(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = String(self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !drop($0) })!
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    var isSpaceOrTab: Bool { self == "\t" || properties.generalCategory == .spaceSeparator }
    var isLineBreak: Bool {
        switch value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }
}
