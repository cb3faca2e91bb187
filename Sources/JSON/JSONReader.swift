#if canImport(Glibc)
import Glibc
#endif

/// A strict pull reader over UTF-8 JSON: a caller that knows the shape it expects reads straight into its own types,
/// and skips (still validating) what it does not need, without building a `JSONValue` tree for the whole text.
///
/// Each read consumes exactly one value. Member keys come as Strings (short keys need no allocation).
/// The reader borrows its bytes: use it inside `withUnsafeBufferPointer` or `JSONText.read`.
public struct JSONReader {
    public enum Kind: Sendable, Equatable { case object, array, string, number, bool, null }

    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
    @usableFromInline var index = 0
    /// The bytes were checked as well-formed JSON before (`JSONText.isChecked`): skipping only finds a value's end.
    let isChecked: Bool

    /// `checked`: the bytes are known to be well-formed JSON, so skipped values are not checked again.
    public init(_ bytes: UnsafeBufferPointer<UInt8>, checked: Bool = false) {
        self.bytes = bytes
        self.isChecked = checked
        skipWhitespace()
    }

    @usableFromInline func error(_ reason: String) -> JSONParser.SyntaxError { .init(offset: index, reason: reason) }

    @inlinable mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// What the next value is; nil at the end of the input or before a byte no value starts with.
    public var nextKind: Kind? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: return nil
        }
    }

    /// The byte offset of the next value, for `range` and error positions.
    public var offset: Int { index }

    /// Throws unless only whitespace is left.
    public mutating func expectEnd() throws {
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected data after the value") }
    }

    /// Moves back to `offset`, where this reader has been (to read a value again, another way).
    public mutating func rewind(to offset: Int) {
        precondition(offset >= 0 && offset <= index, "rewind only to where the reader has been")
        index = offset
    }

    /// Whether only whitespace is left.
    @inlinable public var isAtEnd: Bool { index == bytes.count }

    /// Consumes `literal` if the text goes on with exactly its bytes (then the whitespace after it too); otherwise
    /// leaves the position. For a hot path that knows the exact text a writer produces: anything else is left to the
    /// general reading.
    @inlinable public mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard count <= bytes.count - index else { return false }
        guard count > 0 else { skipWhitespace(); return true }  // an empty text has no base address to read from
        // Compared in place, eight bytes at a time (an event's envelope is a 30-byte literal: byte by byte it was
        // ~13 instructions a byte).
        let text = UnsafeRawPointer(bytes.baseAddress! + index), expected = UnsafeRawPointer(literal.utf8Start)
        var offset = 0
        while offset + 8 <= count {
            guard text.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    == expected.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < count {
            guard text.load(fromByteOffset: offset, as: UInt8.self) == expected.load(fromByteOffset: offset, as: UInt8.self) else { return false }
            offset += 1
        }
        index += count
        skipWhitespace()
        return true
    }

    /// A non-negative integer written as plain digits (no sign, fraction, exponent or leading zero; at most 18
    /// digits), with the whitespace after it; nil, the position left, for any other text.
    public mutating func readPlainInteger() -> Int? {
        var end = index
        var value = 0
        while end < bytes.count, end - index < 18, case let digit = bytes[end] &- UInt8(ascii: "0"), digit < 10 {
            value = value * 10 + Int(digit)
            end += 1
        }
        guard end > index, end - index == 1 || bytes[index] != UInt8(ascii: "0") else { return nil }
        // A longer number, a fraction or an exponent goes on with a digit, '.', 'e' or 'E'.
        if end < bytes.count {
            switch bytes[end] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
            default: break
            }
        }
        index = end
        skipWhitespace()
        return value
    }

    /// Enters the object that comes next, for reading it member by member (`readKey`, the value, `nextMember`):
    /// false when it is empty (then it is consumed whole). Throws if the next value is not an object.
    @inlinable public mutating func beginObject() throws -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw error("expected an object") }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; skipWhitespace(); return false }
        return true
    }

    /// After a member's value: true when another member follows (its key is next), false at the object's end (then
    /// consumed). Throws on anything else.
    @inlinable public mutating func nextMember() throws -> Bool {
        guard index < bytes.count else { throw error("unexpected end of input") }
        if bytes[index] == UInt8(ascii: ",") { index += 1; skipWhitespace(); return true }
        if bytes[index] == UInt8(ascii: "}") { index += 1; skipWhitespace(); return false }
        throw error("expected ',' or '}'")
    }

    /// A member's key, checked as a string value is, and the colon after it: for reading an object member by member
    /// where the caller knows its shape. The key's bytes are valid as long as the reader's.
    public mutating func readKey() throws -> JSONKey {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
        let key = try self.key()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
        index += 1
        skipWhitespace()
        return key
    }

    /// The next value as a tree.
    public mutating func readValue() throws -> JSONValue {
        let value = try value(depth: 0)
        skipWhitespace()
        return value
    }

    /// Calls `member` for each key of the object that comes next, positioned at its value, which `member` reads or
    /// skips; a value it leaves untouched is skipped for it. Throws if the next value is not an object.
    public mutating func readObject(_ member: (inout JSONReader, String) throws -> Void) throws {
        try scanObject(keys: true) { reader, key in try member(&reader, key!.string) }
    }

    /// `readObject` for a hot path: each key as it stands in the text (`JSONKey`), compared with the names the caller
    /// expects without making a String of it.
    public mutating func readMembers(_ member: (inout JSONReader, JSONKey) throws -> Void) throws {
        try scanObject(keys: true) { reader, key in try member(&reader, key!) }
    }

    /// The member loop of reading and skipping: keys read only when `keys`.
    private mutating func scanObject(keys: Bool, _ member: (inout JSONReader, JSONKey?) throws -> Void) throws {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw error("expected an object") }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; skipWhitespace(); return }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            var key: JSONKey?
            if keys { key = try self.key() } else { try skipString() }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let before = index
            try member(&self, key)
            if index == before { try skipValue() }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; skipWhitespace(); continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; skipWhitespace(); return }
            throw error("expected ',' or '}'")
        }
    }

    /// Calls `element` for each element of the array that comes next (one it leaves untouched is skipped). Throws if
    /// the next value is not an array.
    public mutating func readArray(_ element: (inout JSONReader) throws -> Void) throws {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else { throw error("expected an array") }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; skipWhitespace(); return }
        while true {
            let before = index
            try element(&self)
            if index == before { try skipValue() }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; skipWhitespace(); continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; skipWhitespace(); return }
            throw error("expected ',' or ']'")
        }
    }

    /// The next value if it is a string; any other value is skipped and gives nil.
    public mutating func readStringIfPresent() throws -> String? {
        guard nextKind == .string else { try skipValue(); return nil }
        let text = try string()
        skipWhitespace()
        return text
    }

    /// The next value if it is a number (integers too, as `JSONValue.doubleValue`); any other value gives nil.
    public mutating func readDoubleIfPresent() throws -> Double? {
        guard nextKind == .number else { try skipValue(); return nil }
        let value = try number().doubleValue
        skipWhitespace()
        return value
    }

    /// Skips the next value, checking it as strictly as `readValue` would, without building it.
    public mutating func skipValue() throws {
        if isChecked { skipChecked() } else { try skip(depth: 0) }
        skipWhitespace()
    }

    /// Skips the next value and gives the bytes it spans (for reading later with `subreader`).
    public mutating func skipValueRange() throws -> Range<Int> {
        let start = index
        if isChecked { skipChecked() } else { try skip(depth: 0) }
        let end = index
        skipWhitespace()
        return start..<end
    }

    /// Finds the end of the next value without checking it, and gives the bytes it spans: for a value that a strict
    /// reader reads later (`JSONText(_:)`), so it is checked once, by whoever needs it. Stays within the bytes
    /// whatever they hold.
    public mutating func skipValueRangeUnchecked() -> Range<Int> {
        let start = index
        skipChecked()
        let end = max(start, index)
        skipWhitespace()
        return start..<end
    }

    /// A reader over a range this reader's bytes, as `skipValueRange` gave it.
    public func subreader(_ range: Range<Int>) -> JSONReader {
        JSONReader(UnsafeBufferPointer(rebasing: bytes[range]), checked: isChecked)
    }

    /// Finds the end of a value in bytes already checked: brackets counted, strings jumped over, nothing decoded.
    /// Stays within the bytes whatever they hold.
    private mutating func skipChecked() {
        defer { index = min(index, bytes.count) }
        var depth = 0
        repeat {
            guard index < bytes.count else { return }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index = endOfString(from: index + 1)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D:
                index += 1
            default:
                // A number, true, false or null: up to the next delimiter.
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D: break
                    default: index += 1; continue
                    }
                    break
                }
            }
        } while depth > 0
    }

    /// The index after the quote that closes a string whose text starts at `start`, found with memchr (a skipped
    /// string may be megabytes); the end of the bytes if none does.
    private func endOfString(from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var position = start
        while position < bytes.count {
            guard let found = memchr(base + position, Int32(UInt8(ascii: "\"")), bytes.count - position) else { return bytes.count }
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            // Escaped when an odd number of backslashes stands right before it.
            var backslashes = 0
            while quote - backslashes - 1 >= start, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
            if backslashes % 2 == 0 { return quote + 1 }
            position = quote + 1
        }
        return bytes.count
    }

    private mutating func skip(depth: Int) throws {
        guard depth < JSONParser.maximumDepth else { throw error("nesting deeper than \(JSONParser.maximumDepth)") }
        switch nextKind {
        case .object: try scanObject(keys: false) { reader, _ in try reader.skip(depth: depth + 1) }
        case .array: try readArray { reader in try reader.skip(depth: depth + 1) }
        case .string: try skipString()
        case .number: _ = try scanNumber()
        case .bool, .null: _ = try value(depth: depth)
        case nil: throw error(index < bytes.count ? "unexpected character" : "unexpected end of input")
        }
    }

    /// A member key, checked as `string()` checks it: its bytes in place, or the decoded String when it has escapes.
    private mutating func key() throws -> JSONKey {
        let quote = index
        if let text = try unescapedString() { return JSONKey(text: UnsafeBufferPointer(rebasing: bytes[text])) }
        index = quote
        return JSONKey(decoded: try string())
    }

    /// A string's bytes checked (escapes, control characters, UTF-8) without making the String.
    private mutating func skipString() throws {
        let start = index
        index += 1
        while index < bytes.count {
            index = plainASCIIEnd(from: index)
            guard index < bytes.count else { break }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                // Escapes are rare in what is skipped: let the decoding path check this string from its start.
                index = start
                _ = try string()
                return
            case 0..<0x20:
                throw error("control character in string")
            case 0..<0x80:
                index += 1
            default:
                index += try utf8SequenceLength(at: index)
            }
        }
        throw error("unterminated string")
    }

    /// Where the run of plain ASCII text starting at `start` ends (a quote, a backslash, a control character or a
    /// byte ≥ 0x80), found eight bytes at a time; the caller looks at that byte itself.
    func plainASCIIEnd(from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var position = start
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ word: UInt64) -> Bool { (word &- ones) & ~word & highs != 0 }
        while position + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            let special = word & highs != 0                           // ≥ 0x80
                || (word &- 0x2020_2020_2020_2020) & ~word & highs != 0  // < 0x20
                || hasZeroByte(word ^ 0x2222_2222_2222_2222)              // "
                || hasZeroByte(word ^ 0x5C5C_5C5C_5C5C_5C5C)              // \
            if special { break }
            position += 8
        }
        return position
    }

    /// The length of the valid UTF-8 sequence starting at `at` (a byte ≥ 0x80): no overlong forms, no surrogates,
    /// nothing past U+10FFFF.
    func utf8SequenceLength(at start: Int) throws -> Int {
        let lead = bytes[start]
        let length: Int
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF: (length, scalar) = (2, UInt32(lead & 0x1F))
        case 0xE0...0xEF: (length, scalar) = (3, UInt32(lead & 0x0F))
        case 0xF0...0xF4: (length, scalar) = (4, UInt32(lead & 0x07))
        default: throw error("invalid UTF-8 in string")
        }
        guard start + length <= bytes.count else { throw error("invalid UTF-8 in string") }
        for offset in 1..<length {
            let byte = bytes[start + offset]
            guard byte & 0xC0 == 0x80 else { throw error("invalid UTF-8 in string") }
            scalar = scalar << 6 | UInt32(byte & 0x3F)
        }
        let smallest: UInt32 = length == 3 ? 0x800 : length == 4 ? 0x10000 : 0x80
        guard scalar >= smallest, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { throw error("invalid UTF-8 in string") }
        return length
    }
}
