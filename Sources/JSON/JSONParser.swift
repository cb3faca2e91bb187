/// A strict JSON parser (RFC 8259) over UTF-8 bytes, straight into `JSONValue`.
///
/// Written here rather than going through JSONSerialization: it is faster on Linux, keeps
/// integers apart from fractions and tells booleans from numbers.
public struct JSONParser {
    public struct SyntaxError: Error, Equatable, CustomStringConvertible, Sendable {
        public let offset: Int
        public let reason: String
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// Nesting deeper than this is rejected, so a hostile frame cannot exhaust the stack.
    public static let maximumDepth = 512

    public static func parse(_ text: String) throws -> JSONValue {
        var copy = text
        return try copy.withUTF8 { bytes throws in try parse(bytes) }
    }

    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws in try parse(buffer) }
    }

    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var reader = JSONReader(buffer)
        let value = try reader.readValue()
        try reader.expectEnd()
        return value
    }
}

