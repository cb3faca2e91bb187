/// The tree-building half of the reader: `readValue` and the scanning it shares with the typed readers.
extension JSONReader {
    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    mutating func object(depth: Int) throws -> JSONValue {
        var members: [String: JSONValue] = [:]
        try readObject { reader, key in members[key] = try reader.value(depth: depth + 1) }
        return .object(members)
    }

    mutating func array(depth: Int) throws -> JSONValue {
        var elements: [JSONValue] = []
        try readArray { reader in elements.append(try reader.value(depth: depth + 1)) }
        return .array(elements)
    }

    mutating func string() throws -> String {
        let start = index + 1
        // Fast path: no escapes. The bytes are checked here, so the String is made without a second validation.
        if let text = try unescapedString() { return String(decoding: UnsafeBufferPointer(rebasing: bytes[text]), as: UTF8.self) }
        var scalars = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unexpected end of input") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append(0x22)
                case UInt8(ascii: "\\"): scalars.append(0x5C)
                case UInt8(ascii: "/"): scalars.append(0x2F)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    // A surrogate without its pair is read as U+FFFD, as Swift reads invalid UTF-8: text holding one
                    // is valid JSON (RFC 8259 §8.2 leaves its meaning open; Python's json reads it), and one bad
                    // attribute must not refuse a whole message (Home Assistant's snapshot of every entity).
                    if (0xD800..<0xDC00).contains(code) {
                        let mark = index
                        if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                            index += 2
                            let low = try hex4()
                            if (0xDC00..<0xE000).contains(low) {
                                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                code = 0xFFFD
                                index = mark  // the next escape is read on its own
                            }
                        } else {
                            code = 0xFFFD
                        }
                    } else if (0xDC00..<0xE000).contains(code) {
                        code = 0xFFFD
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid escape") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in string") }
                let length = byte < 0x80 ? 1 : try utf8SequenceLength(at: index)
                scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + length]))
                index += length
            }
        }
        throw error("unterminated string")
    }

    /// Reads a string from its opening quote as long as it has no escape, checking control characters and UTF-8:
    /// the range of its text (the reader then past the closing quote), or nil with the reader at the first backslash,
    /// where the decoding path goes on.
    mutating func unescapedString() throws -> Range<Int>? {
        index += 1
        let start = index
        while index < bytes.count {
            index = plainASCIIEnd(from: index)
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<index - 1
            }
            if byte == UInt8(ascii: "\\") { return nil }
            if byte < 0x20 { throw error("control character in string") }
            index += byte < 0x80 ? 1 : try utf8SequenceLength(at: index)
        }
        throw error("unterminated string")
    }

    mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("unexpected end of input") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            code = code << 4 | digit
            index += 1
        }
        return code
    }

    /// A number: integers of up to 18 digits, and decimals of up to 18 digits without an exponent, computed from the
    /// digits its one scan took (`computed`); the rest is left to the standard library's parsing.
    mutating func number() throws -> JSONValue {
        let start = index
        let scanned = try scanNumber()
        if let value = Self.computed(scanned) { return value }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if scanned.isInteger, let integer = Int(text) { return .int(integer) }
        guard let double = Double(text) else { throw error("invalid number") }
        return .double(double)
    }

    /// What scanning a number saw: its sign, its first 18 digits as an integer, how many digits it has and how many
    /// of them follow the point.
    struct ScannedNumber {
        var negative = false
        var digits: Int64 = 0
        var count = 0
        var fractionDigits = 0
        var isInteger = true
        var hasExponent = false

        mutating func take(_ byte: UInt8) {
            if count < 18 { digits = digits &* 10 &+ Int64(byte &- UInt8(ascii: "0")) }
            count += 1
        }
    }

    /// Moves past a number, checking JSON's grammar for it, and takes its digits on the way (a multiply-add each, so
    /// skipping a value and reading one share the scan).
    mutating func scanNumber() throws -> ScannedNumber {
        var scanned = ScannedNumber()
        scanned.negative = bytes[index] == UInt8(ascii: "-")
        if scanned.negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            scanned.take(bytes[index])
            index += 1
        } else {
            takeEightDigits(&scanned, fraction: false)
            while index < bytes.count, isDigit(bytes[index]) { scanned.take(bytes[index]); index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            scanned.isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            takeEightDigits(&scanned, fraction: true)
            while index < bytes.count, isDigit(bytes[index]) { scanned.take(bytes[index]); scanned.fractionDigits += 1; index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            scanned.isInteger = false
            scanned.hasExponent = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return scanned
    }

    /// Takes runs of eight digits at once while they fit in the 18 kept (a timestamp's ten integer digits were a
    /// loop turn each): what the byte loop after it would have taken, the same digits, count and fraction digits.
    @inline(__always)
    mutating func takeEightDigits(_ scanned: inout ScannedNumber, fraction: Bool) {
        guard let base = bytes.baseAddress else { return }
        while scanned.count + 8 <= 18, index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self).littleEndian
            // Each byte 0x30…0x39: its high nibble 3, and adding 6 to it does not carry out of the nibble.
            let highNibbles = word & 0xF0F0_F0F0_F0F0_F0F0
            let carried = ((word &+ 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4
            guard (highNibbles | carried) == 0x3333_3333_3333_3333 else { return }
            // The eight digits' value, first byte most significant (pairs, then fours, then the eight).
            var value = word &- 0x3030_3030_3030_3030
            value = (value &* 10) &+ (value >> 8)
            let pairs: UInt64 = 0x0000_00FF_0000_00FF
            value = (((value & pairs) &* (100 &+ (1_000_000 << 32))) &+ (((value >> 16) & pairs) &* (1 &+ (10_000 << 32)))) >> 32
            scanned.digits = scanned.digits &* 100_000_000 &+ Int64(value & 0xFFFF_FFFF)
            scanned.count += 8
            if fraction { scanned.fractionDigits += 8 }
            index += 8
        }
    }

    /// The value of a number of up to 18 digits without an exponent; nil leaves it (and any other) to strtod. Digits below
    /// 2^53: both parts are exact doubles and one division rounds correctly. Above (Home Assistant's timestamps, 16–17
    /// digits): the quotient in 80-bit precision, rounded once more to a double, which is correct unless the 80-bit
    /// quotient sits exactly halfway between two doubles.
    private static func computed(_ scanned: ScannedNumber) -> JSONValue? {
        guard scanned.count <= 18, !scanned.hasExponent else { return nil }
        let (digits, negative, fractionDigits) = (scanned.digits, scanned.negative, scanned.fractionDigits)
        if scanned.isInteger { return .int(Int(negative ? -digits : digits)) }
        let value: Double
        if digits < 1 << 53 {
            value = Double(digits) / powerOfTen(fractionDigits)
        } else {
            #if arch(x86_64) || arch(i386)
            let quotient = Float80(digits) / Float80(powerOfTen(fractionDigits))
            guard quotient.significandBitPattern & 0x7FF != 0x400 else { return nil }
            value = Double(quotient)
            #else
            return nil
            #endif
        }
        return .double(negative ? -value : value)
    }

    /// 10^exponent for 0...18, exact as a double (every power up to 10^22 is). Literals, not a table: a global table
    /// costs a lazy-initialisation check on every number.
    private static func powerOfTen(_ exponent: Int) -> Double {
        switch exponent {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        default: 1e18
        }
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
