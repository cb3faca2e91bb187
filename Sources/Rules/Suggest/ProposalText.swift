import HomeAssistant

/// The one gate between what Home Assistant says (names, areas, units, states, entity ids) and the text of a
/// proposal: every such value is either checked against a grammar or reduced to plain words that can be nothing
/// but a YAML scalar's content and a template's literal text (no line breaks, control or format characters, braces,
/// `%` or `#`).
enum ProposalText {
    /// The appliance with its names made plain and its ids checked; nil when an id or every running state fails.
    static func safe(_ appliance: Appliance) -> Appliance? {
        var a = appliance
        guard a.entities.allSatisfy(EntityID.isValid) else { return nil }
        a.id = key(a.id, fallback: a.kind.rawValue)
        a.name = plain(a.name, limit: 64)
        if a.name.isEmpty { a.name = a.kind.title.prefix(1).uppercased() + a.kind.title.dropFirst() }
        a.area = a.area.map { plain($0, limit: 64) }.flatMap { $0.isEmpty ? nil : $0 }
        switch a.running {
        case .states(let id, let states):
            let kept = states.filter(isPlainState)
            guard !kept.isEmpty else { return nil }
            a.running = .states(id, kept)
        case .notStates(let id, let states):
            a.running = .notStates(id, states.filter(isPlainState))
        case .power, .progressBetween: break
        }
        switch a.remaining {
        case .amount(let id, let unit)?: a.remaining = .amount(id, unit: plain(unit, limit: 12))
        case .attribute(let id, let name)?:
            guard !name.isEmpty, name.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }) else {
                a.remaining = nil
                break
            }
            a.remaining = .attribute(id, name)
        default: break
        }
        return a
    }

    /// A YAML key: lower-case letters, digits and underscores, as Home Assistant's object ids.
    static func key(_ text: String, fallback: String) -> String {
        var out = ""
        for unit in text.utf8.prefix(48) {
            switch unit {
            case 97...122, 48...57: out.unicodeScalars.append(Unicode.Scalar(unit))
            case 65...90: out.unicodeScalars.append(Unicode.Scalar(unit + 32))
            default: if !out.isEmpty, out.last != "_" { out += "_" }
            }
        }
        while out.hasSuffix("_") { out.removeLast() }
        return out.isEmpty ? fallback : out
    }

    /// Words for a comment or a Lock Screen text: control, format and line-separator characters become spaces,
    /// braces, `%` and `#` (which start template syntax or a YAML comment) become parentheses or go, runs of
    /// spaces one, cut at `limit` characters.
    static func plain(_ text: String, limit: Int) -> String {
        var out = ""
        var count = 0
        var space = false
        for scalar in text.unicodeScalars {
            guard count < limit else { break }
            let category = scalar.properties.generalCategory
            var c = scalar
            switch category {
            case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .surrogate, .privateUse, .unassigned: c = " "
            default: break
            }
            switch c {
            case "{", "[": c = "("
            case "}", "]": c = ")"
            case "%", "#", "\\", "`": continue
            default: break
            }
            if c == " " {
                space = !out.isEmpty
                continue
            }
            if space { out += " "; count += 1; space = false }
            out.unicodeScalars.append(c)
            count += 1
        }
        return out
    }

    /// A state safe to write into a template's string literal: letters, digits, spaces and `_-.:/+`, 1–64 long.
    static func isPlainState(_ state: String) -> Bool {
        guard !state.isEmpty, state.unicodeScalars.count <= 64 else { return false }
        return state.unicodeScalars.allSatisfy { c in
            c.properties.isAlphabetic || c.properties.numericType != nil || " _-.:/+".unicodeScalars.contains(c)
        }
    }
}
