/// Compact JSON text with object keys sorted, so equal values always give equal bytes
/// (golden files, digests of delivered bodies).
extension JSONValue {
    public var jsonText: String { String(decoding: jsonBytes, as: UTF8.self) }

    /// The same text as UTF-8 bytes, what goes on the wire.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return out
    }

    public func write(to out: inout String) {
        out += jsonText
    }

    public func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): out.append(contentsOf: JSONValue.format(d).utf8)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (n, element) in elements.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            // Sorted with their values: no lookup of each key again (a hash of it).
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                JSONValue.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Non-finite numbers have no JSON form; they become null rather than invalid text.
    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        return d.description
    }

    public static func writeString(_ s: String, to out: inout String) {
        var bytes: [UInt8] = []
        writeString(s, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Quotes and escapes; text with nothing to escape is copied in one go.
    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var start = 0
            // An index loop, not `enumerated()`: unoptimised (debug, sanitizer) builds look up the enumerated
            // iterator's generic metadata for every byte, which made a 20 MiB snapshot take seconds to write.
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                switch byte {
                case 0x22: out.append(contentsOf: [0x5C, 0x22])
                case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
                start = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
