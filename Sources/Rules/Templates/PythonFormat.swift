import Glibc

/// Python's two ways of formatting values into text, as templates use them: `'%.1f' % x` and `'{:.1f}'.format(x)`.
/// Numbers go through the C library's printf, which Python's float formatting also rounds as.
enum PythonFormat {
    // MARK: printf style: 'format' % values

    static func percent(_ format: String, _ argument: TemplateValue) throws(EvaluationError) -> String {
        var arguments: [TemplateValue] = if case .list(let items) = argument { items } else { [argument] }
        var out = ""
        var chars = Array(format)[...]
        while let c = chars.popFirst() {
            guard c == "%" else { out.append(c); continue }
            var flags = ""
            while let f = chars.first, "-+ 0#".contains(f) { flags.append(f); chars.removeFirst() }
            var width = ""
            while let d = chars.first, d.isNumber { width.append(d); chars.removeFirst() }
            var precision: String?
            if chars.first == "." {
                chars.removeFirst()
                var p = ""
                while let d = chars.first, d.isNumber { p.append(d); chars.removeFirst() }
                precision = p
            }
            guard let conversion = chars.popFirst() else { throw EvaluationError("incomplete format: a % at the end") }
            try checkSize(Int(width) ?? (width.isEmpty ? 0 : .max), precision.map { Int($0) ?? .max })
            if conversion == "%" { out.append("%"); continue }
            guard !arguments.isEmpty else { throw EvaluationError("not enough arguments for format string") }
            let value = arguments.removeFirst()
            out += try convert(value, conversion, flags: flags, width: Int(width), precision: precision.map { Int($0) ?? 0 })
        }
        guard arguments.isEmpty else { throw EvaluationError("not all arguments converted during string formatting") }
        return out
    }

    private static func convert(_ value: TemplateValue, _ conversion: Character, flags: String, width: Int?,
                                precision: Int?) throws(EvaluationError) -> String {
        var text: String
        switch conversion {
        case "s", "r":
            text = conversion == "s" ? value.text : value.repr
            if let precision { text = String(text.prefix(precision)) }
            return pad(text, width: width, left: flags.contains("-"), zero: false)
        case "d", "i", "x", "X", "o":
            guard let number = value.number, number.isFinite, let whole = Int(truncating: number) else {
                throw EvaluationError("%\(conversion) format: a real number is required, not \(value.typeName)")
            }
            let cFormat = "%" + flags + (width.map(String.init) ?? "") + (precision.map { ".\($0)" } ?? "") + "ll" + String(conversion == "i" ? "d" : conversion)
            return printf(cFormat, [Int64(whole)])
        case "f", "F", "e", "E", "g", "G":
            guard let number = value.number else { throw EvaluationError("%\(conversion) format: a real number is required, not \(value.typeName)") }
            let cFormat = "%" + flags + (width.map(String.init) ?? "") + ".\(precision ?? 6)" + String(conversion)
            return printf(cFormat, [number])
        default:
            throw EvaluationError("unsupported format character '\(conversion)'")
        }
    }

    // MARK: str.format

    static func format(_ template: String, _ positional: [TemplateValue], _ named: [String: TemplateValue]) throws(EvaluationError) -> String {
        var out = ""
        var chars = Array(template)[...]
        var next = 0
        while let c = chars.popFirst() {
            if c == "}" {
                guard chars.first == "}" else { throw EvaluationError("single '}' encountered in format string") }
                chars.removeFirst()
                out.append("}")
                continue
            }
            guard c == "{" else { out.append(c); continue }
            if chars.first == "{" { chars.removeFirst(); out.append("{"); continue }
            var field = ""
            while let d = chars.first, d != "}" { field.append(d); chars.removeFirst() }
            guard chars.popFirst() == "}" else { throw EvaluationError("expected '}' before end of string") }
            let (name, spec) = field.firstIndex(of: ":").map { (String(field[..<$0]), String(field[field.index(after: $0)...])) } ?? (field, "")
            let value: TemplateValue
            if name.isEmpty {
                guard next < positional.count else { throw EvaluationError("format: not enough arguments for {}") }
                value = positional[next]
                next += 1
            } else if let index = Int(name) {
                guard index >= 0, index < positional.count else { throw EvaluationError("format: no argument \(index)") }
                value = positional[index]
            } else {
                guard let v = named[name] else { throw EvaluationError("format: no argument named \(name)") }
                value = v
            }
            out += try apply(spec, to: value)
        }
        return out
    }

    /// One `{:spec}`: [[fill]align][sign][#][0][width][,|_][.precision][type].
    static func apply(_ spec: String, to value: TemplateValue) throws(EvaluationError) -> String {
        var s = Array(spec)[...]
        var fill: Character = " ", align: Character?
        if s.count >= 2, "<>^=".contains(s[s.startIndex + 1]) {
            fill = s.removeFirst()
            align = s.removeFirst()
        } else if let a = s.first, "<>^=".contains(a) {
            align = s.removeFirst()
        }
        var sign = ""
        if let f = s.first, "+- ".contains(f) { sign = String(f); s.removeFirst() }
        if s.first == "#" { s.removeFirst() }
        if s.first == "0" { s.removeFirst(); fill = "0"; align = align ?? "=" }
        var widthText = ""
        while let d = s.first, d.isNumber { widthText.append(d); s.removeFirst() }
        var grouping: Character?
        if let g = s.first, g == "," || g == "_" { grouping = g; s.removeFirst() }
        var precision: Int?
        if s.first == "." {
            s.removeFirst()
            var p = ""
            while let d = s.first, d.isNumber { p.append(d); s.removeFirst() }
            precision = Int(p)
        }
        let type = s.popFirst()
        guard s.isEmpty else { throw EvaluationError("invalid format specifier '\(spec)'") }
        let width = Int(widthText) ?? 0
        try checkSize(width, precision)

        var body: String
        var isNumber = false
        switch type {
        case nil where value.number == nil || value.isText, "s":
            if type == "s", !value.isText { throw EvaluationError("unknown format code 's' for \(value.typeName)") }
            body = value.text
            if let precision { body = String(body.prefix(precision)) }
        case nil where grouping != nil && value.integer != nil && !value.isText:
            let i = value.integer!
            isNumber = true
            body = (i < 0 ? "-" : (sign == "+" ? "+" : sign == " " ? " " : "")) + group(String(i.magnitude), with: grouping!)
        case "d", "x", "X", "o", "b":
            guard !value.isText, let i = value.integer else {
                throw EvaluationError("unknown format code '\(type!)' for \(value.typeName)")
            }
            isNumber = true
            let radix = type == "d" ? 10 : type == "o" ? 8 : type == "b" ? 2 : 16
            body = String(i.magnitude, radix: radix, uppercase: type == "X")
            if let grouping, type == "d" { body = group(body, with: grouping) }
            body = (i < 0 ? "-" : (sign == "+" ? "+" : sign == " " ? " " : "")) + body
        default:
            guard let number = value.number, !value.isText else {
                throw EvaluationError("unknown format code '\(type.map(String.init) ?? "")' for \(value.typeName)")
            }
            isNumber = true
            if type == nil, precision == nil {
                body = value.text
            } else {
                let t = type ?? "g"
                let scaled = t == "%" ? number * 100 : number
                let cType = t == "%" ? "f" : String(t)
                body = printf("%" + (sign == "+" ? "+" : sign == " " ? " " : "") + ".\(precision ?? 6)" + cType, [scaled])
                if let grouping {
                    let negative = body.hasPrefix("-") || body.hasPrefix("+") || body.hasPrefix(" ")
                    let head = negative ? String(body.prefix(1)) : ""
                    let digits = negative ? String(body.dropFirst()) : body
                    let integer = digits.prefix { $0.isNumber }
                    body = head + group(String(integer), with: grouping) + digits.dropFirst(integer.count)
                }
                if t == "%" { body += "%" }
            }
        }
        guard body.count < width else { return body }
        let room = width - body.count
        switch align ?? (isNumber ? ">" : "<") {
        case "<": return body + String(repeating: fill, count: room)
        case "^": return String(repeating: fill, count: room / 2) + body + String(repeating: fill, count: room - room / 2)
        case "=":
            let signed = body.first.map { "+- ".contains($0) } ?? false
            return signed ? String(body.first!) + String(repeating: fill, count: room) + body.dropFirst()
                          : String(repeating: fill, count: room) + body
        default: return String(repeating: fill, count: room) + body
        }
    }

    /// Widths and precisions beyond what a field could show are refused: the text would be built before any cap.
    private static func checkSize(_ width: Int, _ precision: Int?) throws(EvaluationError) {
        guard width <= EvaluationLimits.maximumTextLength, (precision ?? 0) <= 400 else {
            throw EvaluationError("format width or precision too large (at most \(EvaluationLimits.maximumTextLength) and 400)")
        }
    }

    private static func group(_ digits: String, with separator: Character) -> String {
        var out = ""
        for (i, d) in digits.reversed().enumerated() {
            if i > 0, i % 3 == 0 { out.append(separator) }
            out.append(d)
        }
        return String(out.reversed())
    }

    private static func pad(_ text: String, width: Int?, left: Bool, zero: Bool) -> String {
        guard let width, text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return left ? text + fill : fill + text
    }

    /// The C library's formatting of one number (Python's float formatting rounds the same way).
    private static func printf(_ format: String, _ arguments: [any CVarArg]) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        let written = withVaList(arguments) { list in vsnprintf(&buffer, buffer.count, format, list) }
        guard written >= 0 else { return "" }
        if Int(written) >= buffer.count {
            buffer = [CChar](repeating: 0, count: Int(written) + 1)
            _ = withVaList(arguments) { list in vsnprintf(&buffer, buffer.count, format, list) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
