/// JSON not yet decoded: a value's bytes inside the frame they came in (shared, not copied), for a reader that knows
/// its shape (`read`) or as a tree (`value()`). Two texts are equal when their values are.
public struct JSONText: Sendable, Equatable, CustomStringConvertible {
    public let bytes: ArraySlice<UInt8>
    /// The bytes were checked as one well-formed value when they were cut out of their frame, so reading them
    /// skips what it does not need without checking it again.
    public let isChecked: Bool

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        isChecked = false
    }

    /// Bytes a strict reader has already checked as one well-formed JSON value.
    public init(checked bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        isChecked = true
    }

    public init(_ text: String) { self.init(ArraySlice(text.utf8)) }
    public init(_ value: JSONValue) { self.init(value.jsonText) }

    /// Reads the text with `body`, which must consume the whole value.
    public func read<T>(_ body: (inout JSONReader) throws -> T) throws -> T {
        try bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(buffer, checked: isChecked)
            let result = try body(&reader)
            try reader.expectEnd()
            return result
        }
    }

    public func value() throws -> JSONValue { try read { try $0.readValue() } }

    /// The same text, checked as one well-formed value now if it was not before: for a reader that acts on parts as it
    /// reads them and must not act on a text that turns out malformed further on.
    public func checked() throws -> JSONText {
        if isChecked { return self }
        try read { try $0.skipValue() }
        return JSONText(checked: bytes)
    }

    public var description: String { String(decoding: bytes, as: UTF8.self) }

    public static func == (a: JSONText, b: JSONText) -> Bool {
        if a.bytes == b.bytes { return true }
        guard let first = try? a.value(), let second = try? b.value() else { return false }
        return first == second
    }
}
