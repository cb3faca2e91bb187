/// Whether bytes are well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF), as RFC 6455 requires
/// of a text message. Runs of ASCII, nearly all of Home Assistant's JSON, are checked 32 and 8 bytes at a time.
public enum UTF8Validation {
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }

    public static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        let high: UInt64 = 0x8080_8080_8080_8080
        while i < count {
            // Thirty-two bytes at a time while they are ASCII: one test per four words.
            while i + 32 <= count, (raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                                    | raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self) | raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) & high == 0 {
                i += 32
            }
            if i == count { break }
            if i + 8 <= count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & high == 0 {
                i += 8
                continue
            }
            let lead = bytes[i]
            if lead < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard i + length <= count else { return false }
            let second = bytes[i + 1]
            guard second >= low, second <= high else { return false }
            for k in 2..<length where bytes[i + k] & 0xC0 != 0x80 { return false }
            i += length
        }
        return true
    }
}
