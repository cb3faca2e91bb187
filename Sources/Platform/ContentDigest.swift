/// FNV-1a 64 of some bytes, as 16 hex digits: enough to tell "same as shown", not a secret.
public enum ContentDigest {
    public static func of(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        // The digits written in place, zero-padded (twice a push: no padding string, no concatenation).
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for i in 0..<16 {
                buffer[i] = digits.utf8Start[Int((hash >> UInt64(60 - 4 * i)) & 0xF)]
            }
            return 16
        }
    }
}
