/// The colours the phone uses, as hex: Aivi's identifiers (SwiftUI system colours, dark appearance) and
/// Island Pulse's status colours.
enum PreviewPalette {
    static let identifiers: [String: String] = [
        "red": "#ff453a", "orange": "#ff9f0a", "yellow": "#ffd60a", "green": "#30d158", "mint": "#63e6e2", "teal": "#40c8e0",
        "cyan": "#64d2ff", "blue": "#0a84ff", "indigo": "#5e5ce6", "purple": "#bf5af2", "pink": "#ff375f", "brown": "#ac8e68",
        "gray": "#8e8e93", "gray2": "#636366", "gray3": "#48484a", "gray4": "#3a3a3c", "gray5": "#2c2c2e", "gray6": "#1c1c1e",
    ]

    static let text = "#ffffff"
    static let secondary = "#8e8e93"
    static let card = "#1c1c1e"
    static let track = "#3a3a3c"
    static let island = "#000000"

    static func color(_ identifier: String?, default fallback: String = text) -> String {
        identifier.flatMap { identifiers[$0] } ?? fallback
    }

    static func status(_ status: String?) -> String {
        switch status {
        case "success": return identifiers["green"]!
        case "failed": return identifiers["red"]!
        default: return identifiers["blue"]!
        }
    }

    /// An accentColor as given: `#` and 3, 4, 6 or 8 hex digits kept, a CSS name (letters only) passed through (SVG
    /// knows them); anything else is no colour (the status colour is drawn).
    static func accent(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        if value.hasPrefix("#") {
            let digits = value.utf8.dropFirst()
            let isHex: (UInt8) -> Bool = { (48...57).contains($0) || (97...102).contains($0 | 0x20) }
            return [3, 4, 6, 8].contains(digits.count) && digits.allSatisfy(isHex) ? value : nil
        }
        return value.count <= 32 && value.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) }) ? value.lowercased() : nil
    }
}
