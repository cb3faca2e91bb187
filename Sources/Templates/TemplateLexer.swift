import Platform

/// Splits an expression's text into tokens, as Jinja's lexer reads a literal: numbers (Python's, with underscores and
/// integers past Int's range kept as written), strings with their escapes, names, and operators longest first.
enum TemplateLexer {
    enum Token: Equatable {
        case number(TemplateValue)
        /// An integer literal past Int's range, as written (Python's integers have none).
        case bigInteger(String)
        case string(String)
        case name(String)
        case symbol(String)
        case end
    }

    /// Operators and punctuation, longest first so `**` wins over `*`.
    static let symbols: [(text: String, chars: [Character])] = ["**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~",
        "<", ">", "(", ")", "[", "]", "{", "}", ",", "|", ".", "=", ":"].map { ($0, Array($0)) }

    /// A non-ASCII character after a backslash as Jinja leaves it: the first scalar spelled as Python's escape
    /// (`xe9`, `u0301`, `U0001f600`: the backslash is the caller's), the rest as they are.
    static func backslashReplaced(_ scalars: [Unicode.Scalar]) -> String {
        guard let first = scalars.first?.value else { return "" }
        let hex = String(first, radix: 16)
        let width = first < 0x100 ? 2 : first < 0x10000 ? 4 : 8
        var out = (width == 2 ? "x" : width == 4 ? "u" : "U") + String(repeating: "0", count: width - hex.count) + hex
        out.unicodeScalars.append(contentsOf: scalars.dropFirst())
        return out
    }

    /// The value of an octal digit scalar (0–7), else nil.
    static func octalDigit(_ c: Unicode.Scalar?) -> UInt32? { c.flatMap { (48...55).contains($0.value) ? $0.value - 48 : nil } }

    static func tokenize(_ text: String) throws(TemplateParser.SyntaxError) -> [(Token, Int)] {
        let chars = Array(text)
        var tokens: [(Token, Int)] = []
        var i = 0
        let symbols = Self.symbols
        while i < chars.count {
            let c = chars[i]
            if c.isWhitespace { i += 1; continue }
            let start = i
            if c.isNumber {
                while i < chars.count, chars[i].isNumber || chars[i] == "_" { i += 1 }
                var isFloat = false
                if i + 1 < chars.count, chars[i] == ".", chars[i + 1].isNumber {
                    isFloat = true
                    i += 1
                    while i < chars.count, chars[i].isNumber { i += 1 }
                }
                if i < chars.count, chars[i] == "e" || chars[i] == "E" {
                    var j = i + 1
                    if j < chars.count, chars[j] == "+" || chars[j] == "-" { j += 1 }
                    if j < chars.count, chars[j].isNumber {
                        isFloat = true
                        i = j
                        while i < chars.count, chars[i].isNumber { i += 1 }
                    }
                }
                let literal = String(chars[start..<i]).replacingAll("_", with: "")
                if !isFloat, let value = Int(literal) {
                    tokens.append((.number(.int(value)), start))
                } else if !isFloat, literal.allSatisfy(\.isASCII) {
                    tokens.append((.bigInteger(literal), start))
                } else if let value = Double(literal) {
                    tokens.append((.number(.double(value)), start))
                } else {
                    throw TemplateParser.SyntaxError(offset: start, message: "invalid number \(literal)")
                }
                continue
            }
            if c == "'" || c == "\"" {
                i += 1
                var value = ""
                var closed = false
                while i < chars.count {
                    let d = chars[i]
                    if d == c { closed = true; i += 1; break }
                    if d == "\\", i + 1 < chars.count {
                        let e = chars[i + 1]
                        // Python's escapes; an unknown one keeps its backslash ('\d' is a regular expression's \d).
                        switch e {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "r": value.append("\r")
                        case "\\", "'", "\"": value.append(e)
                        case _ where Self.octalDigit(e.unicodeScalars.first) != nil:
                            // Octal, up to three digits: '\1' is U+0001, as in Python (so re.sub's \1 is written '\\1').
                            // Python reads scalars: a digit with a combining mark ("2\u{20D7}", one Character) is the
                            // digit's octal, then the mark.
                            var code: UInt32 = 0, count = 0, tail = ""
                            var j = i + 1
                            while j < chars.count, count < 3, let digit = Self.octalDigit(chars[j].unicodeScalars.first) {
                                code = code * 8 + digit
                                count += 1
                                tail = String(String.UnicodeScalarView(chars[j].unicodeScalars.dropFirst()))
                                j += 1
                                if !tail.isEmpty { break }
                            }
                            value.unicodeScalars.append(Unicode.Scalar(code)!)
                            value.append(tail)
                            i = j
                            continue
                        case "x", "u", "U":
                            let width = e == "x" ? 2 : e == "u" ? 4 : 8
                            let digits = String(chars[min(i + 2, chars.count)..<min(i + 2 + width, chars.count)])
                            guard digits.count == width, digits.utf8.count == width, let code = UInt32(digits, radix: 16) else {
                                throw TemplateParser.SyntaxError(offset: i, message: "truncated \\\(e) escape: it needs \(width) hex digits")
                            }
                            guard let scalar = Unicode.Scalar(code) else {
                                throw TemplateParser.SyntaxError(offset: i, message: "\\\(e)\(digits) is not a character (a surrogate or past U+10FFFF)")
                            }
                            value.unicodeScalars.append(scalar)
                            i += 2 + width
                            continue
                        case "a": value.append("\u{07}")
                        case "b": value.append("\u{08}")
                        case "f": value.append("\u{0C}")
                        case "v": value.append("\u{0B}")
                        case "\n": break  // a backslash at the end of a line joins the next, as in Python
                        case "N":
                            throw TemplateParser.SyntaxError(offset: i, message: "\\N{…} (a character by its name) is not supported: write the character itself")
                        case _ where !(e.unicodeScalars.first?.isASCII ?? true):
                            // Jinja reads a literal as ASCII with backslashreplace, then unicode-escape: a backslash before
                            // a non-ASCII character stays, and the character is spelled as its escape ('\é' is "\\xe9").
                            value += "\\" + Self.backslashReplaced(Array(e.unicodeScalars))
                        default: value.append("\\"); value.append(e)
                        }
                        i += 2
                        continue
                    }
                    if d.unicodeScalars.count > 1, d.unicodeScalars.first == "\\" {
                        // A backslash with a combining mark is one Character: the mark is the escaped character.
                        value += "\\" + Self.backslashReplaced(Array(d.unicodeScalars.dropFirst()))
                        i += 1
                        continue
                    }
                    value.append(d)
                    i += 1
                }
                guard closed else { throw TemplateParser.SyntaxError(offset: start, message: "unterminated string") }
                tokens.append((.string(value), start))
                continue
            }
            if c.isLetter || c == "_" {
                while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" { i += 1 }
                tokens.append((.name(String(chars[start..<i])), start))
                continue
            }
            if let symbol = symbols.first(where: { s in
                s.chars.count <= chars.count - i && s.chars.indices.allSatisfy { chars[i + $0] == s.chars[$0] }
            }) {
                tokens.append((.symbol(symbol.text), start))
                i += symbol.chars.count
                continue
            }
            throw TemplateParser.SyntaxError(offset: start, message: "unexpected character \"\(c)\"")
        }
        tokens.append((.end, chars.count))
        return tokens
    }
}
