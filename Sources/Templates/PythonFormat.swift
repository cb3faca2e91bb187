import Glibc

/// Python's two ways of formatting values into text, as templates use them: `'%.1f' % x` and `'{:.1f}'.format(x)`.
///
/// Both specification languages are parsed here completely and rendered here; the C library is asked only for the
/// digits of a float, with a format this file writes from validated parts (`%.<0…400><e|f|g>`), never with text
/// from a template.
enum PythonFormat {
    // MARK: printf style: 'format' % values

    static func percent(_ format: String, _ argument: TemplateValue) throws(EvaluationError) -> String {
        var arguments: [TemplateValue] = if case .list(let items) = argument { items } else { [argument] }
        let mapping: TemplateMapping? = if case .mapping(let m) = argument { m } else { nil }
        var usedMapping = false
        var out = ""
        var chars = Array(format)[...]
        func nextArgument() throws(EvaluationError) -> TemplateValue {
            guard !arguments.isEmpty else { throw EvaluationError("not enough arguments for format string") }
            return arguments.removeFirst()
        }
        func number(_ text: String) throws(EvaluationError) -> Int {
            guard text.count <= 6, let n = Int(text), n <= EvaluationLimits.maximumTextLength else {
                throw EvaluationError("format width or precision \(text) is too large (at most \(EvaluationLimits.maximumTextLength))")
            }
            return n
        }
        while let c = chars.popFirst() {
            guard c == "%" else { out.append(c); continue }
            var keyed: TemplateValue?
            if chars.first == "(" {
                chars.removeFirst()
                guard let close = chars.firstIndex(of: ")") else { throw EvaluationError("incomplete format key") }
                let key = String(chars[..<close])
                chars = chars[(close + 1)...]
                guard let mapping else { throw EvaluationError("format requires a mapping") }
                guard let value = mapping[key] else { throw EvaluationError("KeyError: '\(key)'") }
                keyed = value
                usedMapping = true
            }
            var spec = FormatSpec()
            while let f = chars.first, "-+ 0#".contains(f) {
                switch f {
                case "-": spec.align = "<"
                case "+": spec.sign = "+"
                case " ": if spec.sign == nil { spec.sign = " " }
                case "0": spec.zeroPad = true
                default: spec.alternate = true
                }
                chars.removeFirst()
            }
            if chars.first == "*" {
                chars.removeFirst()
                guard let w = try nextArgument().integer else { throw EvaluationError("* wants int") }
                if w < 0 { spec.align = "<" }
                spec.width = try number(String(w.magnitude))
            } else {
                var width = ""
                while let d = chars.first, d.isASCII, d.isNumber { width.append(d); chars.removeFirst() }
                if !width.isEmpty { spec.width = try number(width) }
            }
            if chars.first == "." {
                chars.removeFirst()
                var p = ""
                while let d = chars.first, d.isASCII, d.isNumber { p.append(d); chars.removeFirst() }
                spec.precision = p.isEmpty ? 0 : try number(p)
            }
            while let l = chars.first, "hlL".contains(l) { chars.removeFirst() }
            guard let conversion = chars.popFirst() else { throw EvaluationError("incomplete format") }
            if spec.align == "<" { spec.zeroPad = false }
            if conversion == "%" { out.append("%"); continue }
            let value: TemplateValue
            if let keyed { value = keyed } else { value = try nextArgument() }
            out += try percentConversion(value, conversion, spec)
            try EvaluationLimits.checkLength(out.utf8.count, "'…' % values")
        }
        guard arguments.isEmpty || usedMapping || mapping != nil else {
            throw EvaluationError("not all arguments converted during string formatting")
        }
        return out
    }

    private static func percentConversion(_ value: TemplateValue, _ conversion: Character, _ spec: FormatSpec) throws(EvaluationError) -> String {
        var spec = spec
        if spec.align == nil { spec.align = spec.zeroPad && "diuxXoeEfFgG".contains(conversion) ? "=" : ">" }
        switch conversion {
        case "s", "r", "a":
            var text = conversion == "s" ? value.text : value.repr
            if let precision = spec.precision { text = String(text.prefix(precision)) }
            spec.precision = nil
            spec.zeroPad = false
            return spec.pad(sign: "", body: text, numeric: false)
        case "d", "i", "u", "x", "X", "o":
            guard let number = value.number, !value.isText else {
                throw EvaluationError("%\(conversion) format: a real number is required, not \(value.typeName)")
            }
            guard number.isFinite, let whole = Int(exactly: number.rounded(.towardZero)) else {
                throw EvaluationError("%\(conversion) format: cannot convert \(value.repr) to an integer")
            }
            let radix = conversion == "o" ? 8 : (conversion == "x" || conversion == "X") ? 16 : 10
            var digits = String(whole.magnitude, radix: radix, uppercase: conversion == "X")
            if let precision = spec.precision, digits.count < precision {
                digits = String(repeating: "0", count: precision - digits.count) + digits
            }
            let prefix = spec.alternate ? (radix == 8 ? "0o" : radix == 16 ? (conversion == "X" ? "0X" : "0x") : "") : ""
            return spec.pad(sign: spec.signText(negative: whole < 0) + prefix, body: digits, numeric: true)
        case "e", "E", "f", "F", "g", "G":
            guard let number = value.number, !value.isText else {
                throw EvaluationError("%\(conversion) format: a real number is required, not \(value.typeName)")
            }
            let (negative, body) = floatBody(number, conversion, precision: spec.precision ?? 6, alternate: spec.alternate)
            return spec.pad(sign: spec.signText(negative: negative), body: body, numeric: true)
        case "c":
            if case .string(let s) = value, s.unicodeScalars.count == 1 { return spec.pad(sign: "", body: s, numeric: false) }
            guard let code = value.integer, code >= 0, code < 0x110000, let scalar = Unicode.Scalar(UInt32(code)) else {
                throw EvaluationError("%c arg not in range(0x110000) or not a single character: \(value.repr)")
            }
            return spec.pad(sign: "", body: String(scalar), numeric: false)
        default:
            throw EvaluationError("unsupported format character '\(conversion)'")
        }
    }

    // MARK: str.format

    static func format(_ template: String, _ positional: [TemplateValue], _ named: [String: TemplateValue]) throws(EvaluationError) -> String {
        var out = ""
        var chars = Array(template)[...]
        var next = 0
        var numbered = false
        func value(_ field: String) throws(EvaluationError) -> TemplateValue {
            // `name`, `0`, or empty, then `.attribute` and `[key]` as Python's field names allow.
            let end = field.firstIndex { $0 == "." || $0 == "[" } ?? field.endIndex
            let head = String(field[..<end])
            var current: TemplateValue
            if head.isEmpty {
                if numbered { throw EvaluationError("cannot switch from manual field specification to automatic field numbering") }
                guard next < positional.count else { throw EvaluationError("Replacement index \(next) out of range for positional args tuple") }
                current = positional[next]
                next += 1
            } else if head.allSatisfy({ $0.isASCII && $0.isNumber }) {
                numbered = true
                guard head.count <= 6, let index = Int(head), index < positional.count else {
                    throw EvaluationError("Replacement index \(head) out of range for positional args tuple")
                }
                current = positional[index]
            } else {
                guard let v = named[head] else { throw EvaluationError("KeyError: '\(head)'") }
                current = v
            }
            var rest = field[end...]
            while let first = rest.first {
                rest.removeFirst()
                let stop = first == "." ? (rest.firstIndex { $0 == "." || $0 == "[" } ?? rest.endIndex) : (rest.firstIndex(of: "]") ?? rest.endIndex)
                let name = String(rest[..<stop])
                rest = rest[stop...]
                if first == "[" {
                    guard rest.first == "]" else { throw EvaluationError("Missing ']' in format string") }
                    rest.removeFirst()
                }
                switch (current, first) {
                case (.mapping(let m), _):
                    guard let member = m[name] else { throw EvaluationError("no attribute or key '\(name)'") }
                    current = member
                case (.list(let items), "["):
                    guard let i = Int(name), items.indices.contains(i) else { throw EvaluationError("list index \(name) out of range") }
                    current = items[i]
                default:
                    guard let field = try TemplateEvaluator.timeField(current, name) else {
                        throw EvaluationError("\(current.typeName) has no attribute or item '\(name)'")
                    }
                    current = field
                }
            }
            return current
        }
        while let c = chars.popFirst() {
            if c == "}" {
                guard chars.first == "}" else { throw EvaluationError("Single '}' encountered in format string") }
                chars.removeFirst()
                out.append("}")
                continue
            }
            guard c == "{" else { out.append(c); continue }
            if chars.first == "{" { chars.removeFirst(); out.append("{"); continue }
            // The field, with one level of nested fields in its specification (`{:{width}}`).
            var field = ""
            var depth = 0
            while let d = chars.first, d != "}" || depth > 0 {
                if d == "{" { depth += 1 } else if d == "}" { depth -= 1 }
                guard depth <= 1 else { throw EvaluationError("Max string recursion exceeded") }
                field.append(d)
                chars.removeFirst()
            }
            guard chars.popFirst() == "}" else { throw EvaluationError("expected '}' before end of string") }
            var (name, spec) = field.firstIndex(of: ":").map { (String(field[..<$0]), String(field[field.index(after: $0)...])) } ?? (field, "")
            var conversion: Character?
            if let bang = name.firstIndex(of: "!") {
                let rest = name[name.index(after: bang)...]
                guard rest.count == 1, let kind = rest.first, "rsa".contains(kind) else {
                    throw EvaluationError("Unknown conversion specifier \(rest)")
                }
                conversion = kind
                name = String(name[..<bang])
            }
            if spec.contains("{") {
                var expanded = ""
                var inner = Array(spec)[...]
                while let s = inner.popFirst() {
                    guard s == "{" else { expanded.append(s); continue }
                    guard let close = inner.firstIndex(of: "}") else { throw EvaluationError("unmatched '{' in format spec") }
                    expanded += try value(String(inner[..<close])).text
                    inner = inner[(close + 1)...]
                }
                spec = expanded
            }
            var item = try value(name)
            if let conversion { item = .string(conversion == "s" ? item.text : item.repr) }
            out += try apply(spec, to: item)
            try EvaluationLimits.checkLength(out.utf8.count, "format()")
        }
        return out
    }

    /// One `{:spec}` applied to a value, as that value's type's `__format__` does.
    static func apply(_ specText: String, to value: TemplateValue) throws(EvaluationError) -> String {
        if specText.isEmpty { return value.text }
        let spec = try FormatSpec(parsing: specText)
        switch value {
        case .string(let s):
            return try spec.formatText(s, specText)
        case .int(let i):
            return try spec.formatInteger(i, specText)
        case .bool(let b):
            return try spec.formatInteger(b ? 1 : 0, specText)
        case .double(let d):
            return try spec.formatFloat(d, specText)
        case .datetime(let t, let offset):
            // datetime.__format__ is strftime.
            let utcOffset = offset == TemplateValue.naive ? nil : offset
            return StrftimeFormat.format(specText, epoch: TemplateValue.wallTime(t, offset), utcOffset: utcOffset)
        default:
            throw EvaluationError("unsupported format string passed to \(value.typeName).__format__")
        }
    }

    /// The digits of a float for `e`, `f`, `g` (and upper case) at a validated precision; `inf` and `nan` as Python
    /// writes them. The sign is returned apart, for padding.
    static func floatBody(_ number: Double, _ type: Character, precision: Int, alternate: Bool) -> (negative: Bool, body: String) {
        let upper = type.isUppercase
        if number.isNaN { return (false, upper ? "NAN" : "nan") }
        if number.isInfinite { return (number < 0, upper ? "INF" : "inf") }
        let conversion: String = switch type {
        case "e", "E": "e"
        case "g", "G": "g"
        default: "f"
        }
        let format = "%" + (alternate ? "#" : "") + ".\(max(0, min(precision, 400)))" + conversion
        var body = cFormatted(format, number.magnitude)
        if upper { body = body.uppercased() }
        return (number.sign == .minus, body)
    }

    /// vsnprintf for one double with a format built by `floatBody`.
    private static func cFormatted(_ format: String, _ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        let written = withVaList([value]) { list in vsnprintf(&buffer, buffer.count, format, list) }
        guard written >= 0 else { return "" }
        if Int(written) >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(written) + 1)
            _ = withVaList([value]) { list in vsnprintf(&buffer, buffer.count, format, list) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Python's format-specification mini-language: `[[fill]align][sign][z][#][0][width][,|_][.precision][type]`.
struct FormatSpec {
    var fill: Character = " "
    var align: Character?
    var sign: Character?
    var coerceNegativeZero = false
    var alternate = false
    var zeroPad = false
    var width = 0
    var grouping: Character?
    var precision: Int?
    var type: Character?

    init() {}

    init(parsing text: String) throws(EvaluationError) {
        var s = Array(text)[...]
        var explicitFill = false
        if s.count >= 2, "<>^=".contains(s[s.startIndex + 1]) {
            fill = s.removeFirst()
            align = s.removeFirst()
            explicitFill = true
        } else if let a = s.first, "<>^=".contains(a) {
            align = s.removeFirst()
        }
        if let f = s.first, "+- ".contains(f) { sign = f; s.removeFirst() }
        if s.first == "z" { coerceNegativeZero = true; s.removeFirst() }
        if s.first == "#" { alternate = true; s.removeFirst() }
        if s.first == "0" { zeroPad = true; s.removeFirst() }
        var widthText = ""
        while let d = s.first, d.isASCII, d.isNumber { widthText.append(d); s.removeFirst() }
        if !widthText.isEmpty { width = try Self.bounded(widthText, "width") }
        if let g = s.first, g == "," || g == "_" { grouping = g; s.removeFirst() }
        if s.first == "." {
            s.removeFirst()
            var p = ""
            while let d = s.first, d.isASCII, d.isNumber { p.append(d); s.removeFirst() }
            guard !p.isEmpty else { throw EvaluationError("Format specifier missing precision") }
            precision = try Self.bounded(p, "precision")
            guard precision! <= 400 else { throw EvaluationError("format precision \(p) is too large (at most 400)") }
        }
        type = s.popFirst()
        guard s.isEmpty else { throw EvaluationError("Invalid format specifier '\(text)'") }
        if zeroPad, !explicitFill { fill = "0" }
        if zeroPad, align == nil { align = "=" }
    }

    private static func bounded(_ digits: String, _ what: String) throws(EvaluationError) -> Int {
        guard digits.count <= 6, let n = Int(digits), n <= EvaluationLimits.maximumTextLength else {
            throw EvaluationError("format \(what) \(digits.prefix(20)) is too large (at most \(EvaluationLimits.maximumTextLength))")
        }
        return n
    }

    func signText(negative: Bool) -> String {
        negative ? "-" : sign == "+" ? "+" : sign == " " ? " " : ""
    }

    func formatText(_ s: String, _ text: String) throws(EvaluationError) -> String {
        guard type == nil || type == "s" else {
            throw EvaluationError("Unknown format code '\(type!)' for object of type 'str'")
        }
        guard sign == nil else { throw EvaluationError("Sign not allowed in string format specifier") }
        guard !alternate else { throw EvaluationError("Alternate form (#) not allowed in string format specifier") }
        guard grouping == nil else { throw EvaluationError("Cannot specify '\(grouping!)' with 's'.") }
        guard align != "=" else { throw EvaluationError("'=' alignment not allowed in string format specifier") }
        let body = precision.map { String(s.prefix($0)) } ?? s
        return pad(sign: "", body: body, numeric: false)
    }

    func formatInteger(_ i: Int, _ text: String) throws(EvaluationError) -> String {
        switch type {
        case nil, "d", "n", "b", "o", "x", "X", "c":
            guard precision == nil else { throw EvaluationError("Precision not allowed in integer format specifier") }
        case "e", "E", "f", "F", "g", "G", "%":
            return try formatFloat(Double(i), text)
        default:
            throw EvaluationError("Unknown format code '\(type!)' for object of type 'int'")
        }
        if type == "c" {
            guard sign == nil else { throw EvaluationError("Sign not allowed with integer format specifier 'c'") }
            guard i >= 0, i < 0x110000, let scalar = Unicode.Scalar(UInt32(i)) else {
                throw EvaluationError("%c arg not in range(0x110000)")
            }
            return pad(sign: "", body: String(scalar), numeric: false)
        }
        let radix = switch type { case "b": 2; case "o": 8; case "x", "X": 16; default: 10 }
        if grouping == ",", radix != 10 { throw EvaluationError("Cannot specify ',' with '\(type!)'.") }
        if grouping != nil, type == "n" { throw EvaluationError("Cannot specify '\(grouping!)' with 'n'.") }
        var digits = String(i.magnitude, radix: radix, uppercase: type == "X")
        if let grouping { digits = Self.group(digits, with: grouping, every: radix == 10 ? 3 : 4) }
        let prefix = alternate ? (radix == 2 ? "0b" : radix == 8 ? "0o" : radix == 16 ? (type == "X" ? "0X" : "0x") : "") : ""
        return pad(sign: signText(negative: i < 0) + prefix, body: digits, numeric: true)
    }

    func formatFloat(_ d: Double, _ text: String) throws(EvaluationError) -> String {
        guard type.map({ "eEfFgGn%".contains($0) }) ?? true else {
            throw EvaluationError("Unknown format code '\(type!)' for object of type 'float'")
        }
        if grouping != nil, type == "n" { throw EvaluationError("Cannot specify '\(grouping!)' with 'n'.") }
        var value = d
        var body: String
        var negative: Bool
        switch type {
        case "%":
            value = d * 100
            (negative, body) = PythonFormat.floatBody(value, "f", precision: precision ?? 6, alternate: alternate)
            body += "%"
        case nil:
            if let precision {
                (negative, body) = Self.general(value, precision: max(precision, 1), alternate: alternate)
            } else {
                negative = value.sign == .minus && !value.isNaN
                body = TemplateValue.double(value.magnitude).text
            }
        case "n":
            (negative, body) = PythonFormat.floatBody(value, "g", precision: precision ?? 6, alternate: alternate)
        default:
            (negative, body) = PythonFormat.floatBody(value, type!, precision: precision ?? 6, alternate: alternate)
        }
        if coerceNegativeZero, negative, body.allSatisfy({ !"123456789".contains($0) }) { negative = false }
        if let grouping {
            let integer = body.prefix { $0.isASCII && $0.isNumber }
            body = Self.group(String(integer), with: grouping, every: 3) + body.dropFirst(integer.count)
        }
        return pad(sign: signText(negative: negative), body: body, numeric: true)
    }

    /// The empty type with a precision: like `g`, but fixed-point keeps a digit after the point and scientific
    /// notation starts one exponent sooner.
    private static func general(_ d: Double, precision: Int, alternate: Bool) -> (Bool, String) {
        guard d.isFinite, d != 0 else {
            let (negative, body) = PythonFormat.floatBody(d, "g", precision: precision, alternate: alternate)
            return (negative, d == 0 ? "0.0" : body)
        }
        let (_, scientific) = PythonFormat.floatBody(d, "e", precision: precision - 1, alternate: false)
        let exponent = Int(scientific.split(separator: "e").last ?? "0") ?? 0
        if exponent < -4 || exponent >= precision - 1 {
            let parts = scientific.split(separator: "e")
            var mantissa = String(parts[0])
            if mantissa.contains("."), !alternate {
                while mantissa.hasSuffix("0") { mantissa.removeLast() }
                if mantissa.hasSuffix(".") { mantissa.removeLast() }
            }
            return (d.sign == .minus, mantissa + "e" + parts[1])
        }
        var (_, body) = PythonFormat.floatBody(d, "f", precision: max(0, precision - 1 - exponent), alternate: false)
        if body.contains(".") {
            while body.hasSuffix("0") { body.removeLast() }
            if body.hasSuffix(".") { body += "0" }
        } else {
            body += ".0"
        }
        return (d.sign == .minus, body)
    }

    static func group(_ digits: String, with separator: Character, every size: Int) -> String {
        var out = ""
        for (i, d) in digits.reversed().enumerated() {
            if i > 0, i % size == 0 { out.append(separator) }
            out.append(d)
        }
        return String(out.reversed())
    }

    /// The sign (and prefix) and body padded to the width: `=` pads between them, numbers align right by default.
    func pad(sign: String, body: String, numeric: Bool) -> String {
        let length = sign.count + body.count
        guard length < width else { return sign + body }
        let room = width - length
        let filler = zeroPad && fill == " " && align == "=" ? "0" : fill
        switch align ?? (zeroPad ? "=" : numeric ? ">" : "<") {
        case "<": return sign + body + String(repeating: filler, count: room)
        case "^": return String(repeating: filler, count: room / 2) + sign + body + String(repeating: filler, count: room - room / 2)
        case "=": return sign + String(repeating: filler, count: room) + body
        default: return String(repeating: filler, count: room) + sign + body
        }
    }
}
